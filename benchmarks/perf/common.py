"""What the perf scripts share: where things are, the run's record (command, machine,
load), JSON results, latency percentiles, memory and child processes.

A script in ``benchmarks/perf/`` runs as ``python benchmarks/perf/X.py`` from the
repository root and imports this module, the sciera library (never ``sciera.train``) and
nothing else of ``benchmarks/`` (``tests/unit/benchmarks/test_perf_imports.py``).
"""

from __future__ import annotations

import json
import os
import platform
import shlex
import subprocess
import sys
import tempfile
import time
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import numpy as np

ROOT = Path(__file__).resolve().parents[2]
DATA = ROOT.parent / "shared" / "data"
RESULTS = ROOT / "benchmarks" / "results"


def log(msg: str) -> None:
    print(f"{time.strftime('%H:%M:%S')} {msg}", file=sys.stderr, flush=True)


def command() -> str:
    """This run's command line, as typed (``python benchmarks/perf/X.py ...``)."""
    return shlex.join(["python", *sys.argv])


def loadavg() -> list[float]:
    """The 1, 5 and 15 minute load averages (the machine is shared: every run records them)."""
    return [round(x, 2) for x in os.getloadavg()]


def machine() -> dict[str, Any]:
    with open("/proc/meminfo", encoding="ascii") as info:
        total_kib = int(next(line for line in info if line.startswith("MemTotal")).split()[1])
    return {
        "cpus": os.cpu_count(),
        "memory_gb": round(total_kib * 1024 / 1e9, 1),
        "python": platform.python_version(),
        "platform": platform.platform(),
    }


def write_json(path: Path, data: Any, indent: int = 1) -> Path:
    """``data`` as JSON (UTF-8, a newline at the end), its folder made if needed."""
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(json.dumps(data, indent=indent, ensure_ascii=False) + "\n", encoding="utf-8")
    return path


def latency_ms(run: Callable[[Any], object], items: Sequence[Any], warmup: int) -> dict[str, float]:
    """p50, p95 and mean milliseconds of ``run(item)`` over ``items[warmup:]``, after
    running the first ``warmup`` items untimed."""
    for item in items[:warmup]:
        run(item)
    times = []
    for item in items[warmup:]:
        start = time.perf_counter()
        run(item)
        times.append((time.perf_counter() - start) * 1000)
    arr = np.array(times)
    return {
        "p50_ms": float(np.percentile(arr, 50)),
        "p95_ms": float(np.percentile(arr, 95)),
        "mean_ms": float(arr.mean()),
        "queries": len(times),
    }


def memory() -> dict[str, int]:
    """This process's memory in bytes from ``/proc/self/status``: resident now (``rss``),
    its peak (``hwm``; reset by exec, unlike ``ru_maxrss``), anonymous and file-backed."""
    fields = {"VmRSS": "rss", "VmHWM": "hwm", "RssAnon": "anon", "RssFile": "file"}
    out: dict[str, int] = {}
    with open("/proc/self/status", encoding="ascii") as status:
        for line in status:
            key, _, value = line.partition(":")
            if key in fields:
                out[fields[key]] = int(value.split()[0]) * 1024
    return out


@dataclass(frozen=True)
class Child:
    """A finished child process."""

    returncode: int
    seconds: float
    peak_rss_mb: float  # its ru_maxrss from os.wait4, MB = 10^6 bytes
    stdout: str
    stderr: str


def run_child(
    cmd: Sequence[str],
    *,
    cwd: Path | None = None,
    env: Mapping[str, str] | None = None,
    capture: bool = False,
) -> Child:
    """Run ``cmd`` to its end: exit code, wall seconds, peak resident memory, and with
    ``capture`` its output (else it goes to this process's terminal)."""
    with (
        tempfile.TemporaryFile("w+", encoding="utf-8") as out,
        tempfile.TemporaryFile("w+", encoding="utf-8") as err,
    ):
        start = time.perf_counter()
        proc = subprocess.Popen(
            list(cmd),
            cwd=cwd,
            env=None if env is None else dict(env),
            stdout=out if capture else None,
            stderr=err if capture else None,
        )
        _, status, usage = os.wait4(proc.pid, 0)
        seconds = time.perf_counter() - start
        proc.returncode = os.waitstatus_to_exitcode(status)
        out.seek(0)
        err.seek(0)
        return Child(proc.returncode, seconds, usage.ru_maxrss * 1024 / 1e6, out.read(), err.read())


def package_version(package: str) -> str | None:
    from importlib import metadata

    try:
        return metadata.version(package)
    except metadata.PackageNotFoundError:
        return None
