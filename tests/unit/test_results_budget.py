"""benchmarks/results stays within its budget (DESIGN.md: summaries; per-query rows gzipped;
at most 15 MB): the bytes of the files git tracks there, and no plain per-query rows."""

from __future__ import annotations

import shutil
import subprocess
from pathlib import Path

import pytest

from sciera.eval.pack import KEEP_PLAIN, PACKED_SUFFIXES

ROOT = Path(__file__).resolve().parents[2]
RESULTS = "benchmarks/results"
BUDGET = 15_000_000  # bytes (MB = 10^6 bytes)


def tracked_files() -> list[Path]:
    """The files under benchmarks/results that git tracks (and the work tree still has)."""
    if shutil.which("git") is None or not (ROOT / ".git").exists():
        pytest.skip("not a git checkout")
    listed = subprocess.run(
        ["git", "ls-files", "-z", "--", RESULTS], cwd=ROOT, capture_output=True, check=True
    ).stdout.decode()
    return [ROOT / name for name in listed.split("\0") if name and (ROOT / name).is_file()]


def test_results_fit_the_budget():
    files = tracked_files()
    size = sum(f.stat().st_size for f in files)
    biggest = sorted(files, key=lambda f: f.stat().st_size, reverse=True)[:5]
    shown = ", ".join(f"{f.relative_to(ROOT)} ({f.stat().st_size:,})" for f in biggest)
    assert size <= BUDGET, (
        f"{RESULTS} holds {size:,} bytes in {len(files)} files, over {BUDGET:,}: pack it "
        f"(sciera eval pack {RESULTS}/NAME --png) or drop rows nothing reads; biggest: {shown}"
    )


def test_per_query_rows_are_gzipped():
    plain = [
        f.relative_to(ROOT).as_posix()
        for f in tracked_files()
        if f.suffix in PACKED_SUFFIXES and f.name not in KEEP_PLAIN
    ]
    assert not plain, f"gzip them: sciera eval pack FILE ({plain})"
