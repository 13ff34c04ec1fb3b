"""A bounded load test of ``sciera serve`` on loopback: concurrent ``/v1/search`` with a few
``/v1/ask`` at the same time, against a real server on the default settings.

Run from the repository root with the venv active (no network needed)::

    python benchmarks/perf/serve_load.py --corpus corpora/scifact --searches 300 --concurrency 8 \\
        --asks 4 --queue-size 1

The server is started here on 127.0.0.1 (a free port), warmed up with one search and one
ask (model loading is reported apart), then ``--searches`` searches (SciFact test claims,
``--concurrency`` at a time) run while ``--asks`` asks are sent at once. With
``--queue-size 1`` one ask runs, one waits and the rest must be refused with 503 and
``Retry-After``: those are counted apart from errors. Everything stops by itself after
``--limit-seconds``. Latency p50/p95/max per endpoint, status counts, 5xx other than 503
(must be 0) and throughput go to ``benchmarks/results/serve_load.json``.
"""

from __future__ import annotations

import argparse
import asyncio
import json
import shlex
import socket
import subprocess
import sys
import tempfile
import time
from collections import Counter
from pathlib import Path

from common import DATA, RESULTS, ROOT, command, log, write_json

HOST = "127.0.0.1"  # loopback only


def percentile(values: list[float], q: float) -> float | None:
    if not values:
        return None
    ordered = sorted(values)
    return ordered[min(len(ordered) - 1, round(q * (len(ordered) - 1)))]


def summary(rows: list[dict]) -> dict:
    ok = [r["seconds"] for r in rows if r["status"] == 200]
    status = Counter(str(r["status"]) for r in rows)
    return {
        "requests": len(rows),
        "status": dict(sorted(status.items())),
        "ok": len(ok),
        "refused_503": status.get("503", 0),
        "server_errors_other_5xx": sum(
            1
            for r in rows
            if isinstance(r["status"], int) and r["status"] >= 500 and r["status"] != 503
        ),
        "client_failures": sum(1 for r in rows if not isinstance(r["status"], int)),
        "p50_s": percentile(ok, 0.50),
        "p95_s": percentile(ok, 0.95),
        "max_s": max(ok) if ok else None,
        "retry_after": sorted({r["retry_after"] for r in rows if r.get("retry_after")}),
    }


async def call(client, path: str, body: dict) -> dict:
    t0 = time.perf_counter()
    try:
        resp = await client.post(path, json=body)
        status: int | str = resp.status_code
        retry = resp.headers.get("retry-after")
    except Exception as exc:  # a failed request is a measured outcome, not a crash
        status, retry = type(exc).__name__, None
    return {
        "path": path,
        "status": status,
        "seconds": time.perf_counter() - t0,
        "retry_after": retry,
    }


async def load(base: str, claims: list[str], args) -> dict:
    import httpx

    limits = httpx.Limits(max_connections=args.concurrency + args.asks + 2)
    async with httpx.AsyncClient(
        base_url=base, timeout=args.limit_seconds, limits=limits
    ) as client:
        t0 = time.perf_counter()
        warm = {
            "search": await call(client, "/v1/search", {"query": claims[0], "k": 10}),
            "ask": await call(client, "/v1/ask", {"question": claims[1]}),
        }
        log(f"warm-up {json.dumps(warm)}")
        gate = asyncio.Semaphore(args.concurrency)

        async def one_search(i: int) -> dict:
            async with gate:
                return await call(client, "/v1/search", {"query": claims[i % len(claims)], "k": 10})

        started = time.perf_counter()
        asks = [call(client, "/v1/ask", {"question": claims[-1 - i]}) for i in range(args.asks)]
        searches = [one_search(i) for i in range(args.searches)]
        rows = await asyncio.wait_for(asyncio.gather(*asks, *searches), timeout=args.limit_seconds)
        wall = time.perf_counter() - started
    search_rows = [r for r in rows if r["path"] == "/v1/search"]
    ask_rows = [r for r in rows if r["path"] == "/v1/ask"]
    return {
        "warm_up": warm,
        "warm_up_seconds": started - t0,
        "wall_seconds": wall,
        "search": {**summary(search_rows), "per_second": len(search_rows) / wall},
        "ask": summary(ask_rows),
    }


def main() -> None:
    ap = argparse.ArgumentParser(
        description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter
    )
    ap.add_argument("--corpus", type=Path, default=ROOT / "corpora" / "scifact")
    ap.add_argument("--searches", type=int, default=300)
    ap.add_argument("--concurrency", type=int, default=8)
    ap.add_argument("--asks", type=int, default=4)
    ap.add_argument("--queue-size", type=int, default=1)
    ap.add_argument("--limit-seconds", type=float, default=600.0)
    ap.add_argument("--out", type=Path, default=RESULTS / "serve_load.json")
    args = ap.parse_args()

    claims = [json.loads(ln)["text"] for ln in (DATA / "scifact" / "queries.jsonl").open()][:400]
    with socket.socket() as s:
        s.bind((HOST, 0))
        port = s.getsockname()[1]
    exe = str(Path(sys.executable).parent / "sciera")
    cmd = [exe, "serve", "--corpus", str(args.corpus), "--host", HOST, "--port", str(port)]
    cmd += ["--queue-size", str(args.queue_size)]
    server_log = Path(tempfile.gettempdir()) / "sciera-serve-load.log"
    with server_log.open("w") as out:
        proc = subprocess.Popen(cmd, stdout=out, stderr=subprocess.STDOUT)
        try:
            base = f"http://{HOST}:{port}"
            deadline = time.monotonic() + 120
            import httpx

            while True:
                try:
                    if httpx.get(base + "/healthz", timeout=2).status_code == 200:
                        break
                except httpx.HTTPError:
                    pass
                if proc.poll() is not None or time.monotonic() > deadline:
                    sys.exit(f"the server did not start; see {server_log}")
                time.sleep(0.5)
            log(f"server up on {base}")
            result = asyncio.run(load(base, claims, args))
        finally:
            proc.terminate()
            proc.wait(timeout=60)
    result = {
        "command": command(),
        "server": shlex.join(cmd[1:]),
        "settings": {
            "searches": args.searches,
            "concurrency": args.concurrency,
            "asks": args.asks,
            "queue_size": args.queue_size,
        },
        **result,
    }
    write_json(args.out, result)
    log(f"wrote {args.out}")
    print(json.dumps({k: result[k] for k in ("search", "ask", "wall_seconds")}, indent=1))
    bad = result["search"]["server_errors_other_5xx"] + result["ask"]["server_errors_other_5xx"]
    sys.exit(1 if bad else 0)


if __name__ == "__main__":
    main()
