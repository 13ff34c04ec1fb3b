"""Capacity model of sciera's corpus engines: how ingest, BM25, dense and Qdrant grow with
corpus size, fitted and extrapolated to PubMed scale (60M passages).

    python benchmarks/perf/capacity.py --sizes 100000 500000 2000000 --work /tmp/capacity \\
        --out benchmarks/results/scale/capacity.json [--queries 200] [--embed-sample 2000] \\
        [--qdrant-max 100000] [--ray-sample 1000] \\
        [--edge-max 2000000] \\
        [--edge-flat-max 2000000] \\
        [--steps ingest bm25 bm25_mmap dense qdrant qdrant_edge qdrant_edge_flat embed ray]
        [--limit-minutes M]

Corpus: N synthetic PubMed-like documents (real SciFact/PubMedQA abstract sentences
resampled, written by ``synthetic_corpus.py``), one passage each, in ``WORK/n<N>/src``.
Every measurement runs in a child process of its own (``capacity_steps.py``); its peak
RSS is the child's ``ru_maxrss`` from ``os.wait4``. Per size N:

- ``ingest``: ``sciera.corpus.ingest`` into a fresh store: seconds, passages/s, store disk;
- ``bm25``: ``build_indexes(which=("bm25",))``: seconds, disk, peak RSS; then in a new
  process ``open_retriever(.., "bm25")``: load time, RSS delta, latency p50/p95 of single
  SciFact test claims, k=10 (``search``, with the store, and scoring only);
- ``bm25_mmap``: the same bm25s index loaded with ``mmap=True``: RSS delta, latency;
- ``dense``: sciera's ``FaissIndex`` (exact IndexFlatIP) over N random 384-d unit vectors
  (embedding N passages would take days: that cost is the ``embed`` step, extrapolated):
  add time, RSS delta, disk, latency of one query vector;
- ``qdrant`` (N <= ``--qdrant-max``): sciera's Qdrant engine in local mode, dense (random
  vectors) plus BM25 sparse vectors: build time, disk, RSS, dense/sparse/hybrid latency.

Once: ``embed``: the default embedder's passages/s on ``--embed-sample`` passages with 2
and 1 torch threads; ``ray``: ``embed_on_ray`` on a local cluster with 1 and 2 workers.

Each (size, step) row is appended to ``WORK/rows.jsonl`` when measured; a rerun skips
the rows there (delete a line to measure it again). ``--out`` (JSON: measurements, fits,
plan) and ``capacity.md`` beside it are rebuilt from all rows after every step by
``capacity_report.py``.
``--limit-minutes`` stops between steps. MB and GB are 10^6 and 10^9 bytes.
"""

from __future__ import annotations

import argparse
import json
import shutil
import sys
import time
from collections.abc import Callable, Iterable
from dataclasses import dataclass, field
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

from common import ROOT, command, loadavg, machine, package_version, run_child, write_json

HERE = Path(__file__).resolve().parent
STEPS_SCRIPT = HERE / "capacity_steps.py"
REPORT_SCRIPT = HERE / "capacity_report.py"
SYNTHETIC_SCRIPT = HERE / "synthetic_corpus.py"
VECTOR_MODEL = "vector_model.npz"
SIZED_STEPS = ("ingest", "bm25", "bm25_mmap", "dense", "qdrant", "qdrant_edge", "qdrant_edge_flat")
ONCE_STEPS = ("embed", "ray")
RAY_WORKERS = (1, 2)
PACKAGES = (
    "sciera",
    "bm25s",
    "numba",
    "faiss-cpu",
    "qdrant-client",
    "qdrant-edge-py",
    "torch",
    "ray",
    "numpy",
)
DENSE_NOTE = (
    "dense: random unit vectors (384-d float32) stand in for embeddings; embedding N "
    "passages here would take days, so its cost is the embed step's rate, extrapolated"
)
EDGE_VECTORS_NOTE = (
    "qdrant_edge dense: unit vectors drawn from a Gaussian with the mean and covariance of "
    "real passage embeddings (the real spectrum, not the real clusters), so HNSW recall "
    "and build time are those of a harder set than real embeddings"
)
QDRANT_MODE = "local (in-process); no Qdrant server binary on this machine"
NOTES = [
    DENSE_NOTE,
    "qdrant: local mode (in-process, Python scan over points), not a Qdrant server: its "
    "numbers bound local mode only; at 60M a server with HNSW and shards is needed",
    "qdrant_edge: sciera's qdrant engine on Qdrant's Rust shard (Qdrant Edge) in process, "
    "one shard; a server shard runs this code, so its rows are per-shard costs of a Qdrant "
    "cluster",
    EDGE_VECTORS_NOTE,
    "corpus: real abstract sentences resampled, so the BM25 vocabulary stays that of the "
    "sentence pool while postings grow linearly with N (real PubMed adds rare terms)",
    "BM25 latency is bm25s' numpy path; sciera switches to numba when queries x passages "
    ">= 50M, i.e. for every query above 50M passages (numba compiles on first use)",
    "shared 2-core machine with a background job: times are upper bounds; each row "
    "records the load average before and after",
]

Row = dict[str, Any]
Log = Callable[[str], None]


class StepFailed(Exception):
    """A child process exited with an error (its stderr was shown)."""


# ---- rows ------------------------------------------------------------------------------


def read_rows(path: Path) -> list[Row]:
    if not path.exists():
        return []
    with open(path, encoding="utf-8") as lines:
        return [json.loads(line) for line in lines if line.strip()]


def append_row(path: Path, row: Row) -> None:
    path.parent.mkdir(parents=True, exist_ok=True)
    with open(path, "a", encoding="utf-8") as out:
        out.write(json.dumps(row) + "\n")


def schedule(sizes: Iterable[int], steps: Iterable[str]) -> list[tuple[int | None, str]]:
    """The (size, step) pairs to run: size-independent steps first, then by size."""
    steps = list(steps)
    once = [(None, s) for s in ONCE_STEPS if s in steps]
    return once + [(n, s) for n in sorted(sizes) for s in SIZED_STEPS if s in steps]


def run_schedule(
    plan: list[tuple[int | None, str]],
    rows_path: Path,
    measure: Callable[[int | None, str], Row | None],
    deadline: float | None = None,
    log: Log = print,
    after_step: Callable[[], None] | None = None,
) -> int:
    """Measure every pair of ``plan`` without a row in ``rows_path`` (appending each
    row at once); stop before a step once ``time.monotonic()`` passes ``deadline``.
    ``measure`` returns None for a pair it skips. Returns the rows written."""
    done = {(r.get("size"), r["step"]) for r in read_rows(rows_path)}
    written = 0
    for size, step in plan:
        if (size, step) in done:
            log(f"N={size} {step}: done before, skipped")
            continue
        if deadline is not None and time.monotonic() > deadline:
            log("time limit reached: stopping before the next step")
            break
        try:
            row = measure(size, step)
        except StepFailed as exc:
            log(f"N={size} {step}: FAILED ({exc})")
            continue
        if row is None:
            continue
        append_row(rows_path, {"size": size, "step": step, **row})
        done.add((size, step))
        written += 1
        if after_step is not None:
            after_step()
    return written


# ---- child processes -------------------------------------------------------------------


def run_step(step: str, args: dict[str, Any], scratch: Path) -> Row:
    """Run ``capacity_steps.py step`` in a fresh process; its row plus peak RSS (MB)."""
    scratch.mkdir(parents=True, exist_ok=True)
    result = scratch / f"child-{step}.json"
    result.unlink(missing_ok=True)
    child = run_child([sys.executable, str(STEPS_SCRIPT), step, json.dumps(args), str(result)])
    if child.returncode != 0:
        raise StepFailed(f"{step} exited with {child.returncode}")
    row = json.loads(result.read_text(encoding="utf-8"))
    row["peak_rss_mb"] = child.peak_rss_mb
    return row


@dataclass
class Bench:
    """One run: the options and the work folder."""

    args: argparse.Namespace
    log: Log
    vector_stats: Row | None = field(default=None, init=False)

    @property
    def work(self) -> Path:
        return self.args.work

    def size_dir(self, size: int) -> Path:
        return self.work / f"n{size}"

    def corpus(self, size: int) -> Path:
        return self.size_dir(size) / "corpus"

    def source(self, folder: Path, n: int, seed: int) -> Row:
        """``folder/corpus.jsonl`` with ``n`` synthetic documents of ``seed`` (written
        once by ``synthetic_corpus.py``: the statistics file beside it says what is there)."""
        stats_file = folder / "synthetic.json"
        if stats_file.exists() and (folder / "corpus.jsonl").exists():
            stats = json.loads(stats_file.read_text(encoding="utf-8"))
            if (stats["documents"], stats["seed"]) == (n, seed):
                return stats
        argv = [sys.executable, str(SYNTHETIC_SCRIPT), "--documents", str(n)]
        if run_child([*argv, "--seed", str(seed), "--out", str(folder)]).returncode != 0:
            raise StepFailed(f"synthetic_corpus.py could not write {folder}")
        return json.loads(stats_file.read_text(encoding="utf-8"))

    def vector_model(self) -> Path:
        """The Gaussian fitted to real passage embeddings (the ``vector_model`` step),
        fitted once per work folder from the dense indexes of ``--real-corpora``."""
        path, stats_file = self.work / VECTOR_MODEL, self.work / "vector_model.json"
        if not path.exists() or not stats_file.exists():
            corpora = [str(c) for c in self.args.real_corpora]
            try:
                stats = run_step("vector_model", {"corpora": corpora, "out": str(path)}, self.work)
            except StepFailed as exc:
                raise SystemExit(f"no vector model for Qdrant Edge ({exc})") from exc
            stats.pop("peak_rss_mb")
            stats_file.write_text(json.dumps(stats), encoding="utf-8")
        self.vector_stats = json.loads(stats_file.read_text(encoding="utf-8"))
        return path

    def child(self, step: str, scratch: Path, **args: Any) -> Row:
        return run_step(step, args, scratch)


# ---- the steps (parent side) -----------------------------------------------------------


def measure_ingest(bench: Bench, size: int) -> Row:
    stats = bench.source(bench.size_dir(size) / "src", size, bench.args.seed)
    corpus = bench.corpus(size)
    row = bench.child(
        "ingest", bench.size_dir(size), src=str(corpus.parent / "src"), corpus=str(corpus)
    )
    (corpus / ".capacity-ingested").touch()
    return {**row, "synthetic": stats}


def _ensure_store(bench: Bench, size: int) -> None:
    if not (bench.corpus(size) / ".capacity-ingested").exists():
        bench.log(f"N={size}: no finished store, ingesting first (not recorded)")
        measure_ingest(bench, size)


def _ensure_bm25(bench: Bench, size: int) -> None:
    _ensure_store(bench, size)
    if not (bench.corpus(size) / "index" / "bm25" / "params.index.json").exists():
        bench.log(f"N={size}: no BM25 index, building it first (not recorded)")
        bench.child("bm25_build", bench.size_dir(size), corpus=str(bench.corpus(size)))


def build_and_query(build: Row, query: Row) -> Row:
    """A build row and a query row (two child processes) as one, each peak RSS named."""
    build["build_peak_rss_mb"] = build.pop("peak_rss_mb")
    build["build_peak_delta_mb"] = build["build_peak_rss_mb"] - build.pop("rss_before_build_mb")
    query["query_peak_rss_mb"] = query.pop("peak_rss_mb")
    return {**build, **query}


def measure_bm25(bench: Bench, size: int) -> Row:
    _ensure_store(bench, size)
    corpus, scratch = str(bench.corpus(size)), bench.size_dir(size)
    build = bench.child("bm25_build", scratch, corpus=corpus)
    query = bench.child("bm25_query", scratch, corpus=corpus, queries=bench.args.queries)
    return build_and_query(build, query)


def measure_bm25_mmap(bench: Bench, size: int) -> Row:
    _ensure_bm25(bench, size)
    return bench.child(
        "bm25_mmap",
        bench.size_dir(size),
        corpus=str(bench.corpus(size)),
        queries=bench.args.queries,
    )


def measure_dense(bench: Bench, size: int) -> Row:
    out = bench.size_dir(size) / "dense"
    row = bench.child(
        "dense",
        bench.size_dir(size),
        n=size,
        out=str(out),
        queries=bench.args.queries,
        seed=bench.args.seed,
        keep=bench.args.keep_dense,
    )
    return {**row, "note": DENSE_NOTE}


def measure_qdrant(bench: Bench, size: int) -> Row | None:
    if size > bench.args.qdrant_max:
        bench.log(f"N={size} qdrant: skipped (above --qdrant-max {bench.args.qdrant_max})")
        return None
    _ensure_store(bench, size)
    out, scratch = str(bench.size_dir(size) / "qdrant"), bench.size_dir(size)
    build = bench.child(
        "qdrant_build", scratch, corpus=str(bench.corpus(size)), out=out, seed=bench.args.seed
    )
    query = bench.child(
        "qdrant_query", scratch, out=out, queries=bench.args.queries, seed=bench.args.seed
    )
    return {**build_and_query(build, query), "mode": QDRANT_MODE, "note": DENSE_NOTE}


def measure_qdrant_edge(bench: Bench, size: int, hnsw_m: int = 16) -> Row | None:
    step = "qdrant_edge" if hnsw_m else "qdrant_edge_flat"
    limit = bench.args.edge_max if hnsw_m else bench.args.edge_flat_max
    if size > limit:
        bench.log(f"N={size} {step}: skipped (above its size limit {limit})")
        return None
    _ensure_bm25(bench, size)
    corpus, scratch = str(bench.corpus(size)), bench.size_dir(size)
    out = str(scratch / step)
    args = {"seed": bench.args.seed, "vectors": str(bench.vector_model()), "hnsw_m": hnsw_m}
    build = bench.child("qdrant_edge_build", scratch, corpus=corpus, out=out, **args)
    query = bench.child(
        "qdrant_edge_query", scratch, out=out, queries=bench.args.queries, corpus=corpus, **args
    )
    if not bench.args.keep_dense:
        shutil.rmtree(out, ignore_errors=True)
    row = build_and_query(build, query)
    return {**row, "vectors": bench.vector_stats, "note": EDGE_VECTORS_NOTE}


def measure_qdrant_edge_flat(bench: Bench, size: int) -> Row | None:
    return measure_qdrant_edge(bench, size, hnsw_m=0)


def measure_embed(bench: Bench, size: None) -> Row:
    src = bench.work / "embed" / "src"
    bench.source(src, bench.args.embed_sample, bench.args.seed + 1)
    return bench.child("embed", bench.work, src=str(src))


def measure_ray(bench: Bench, size: None) -> Row:
    folder = bench.work / "ray"
    stats = bench.source(folder / "src", bench.args.ray_sample, bench.args.seed + 2)
    corpus = folder / "corpus"
    if not (corpus / ".capacity-ingested").exists():
        bench.child("ingest", folder, src=str(folder / "src"), corpus=str(corpus))
        (corpus / ".capacity-ingested").touch()
    runs = {
        str(w): bench.child(
            "ray",
            folder,
            corpus=str(corpus),
            home=str(folder / f"home-w{w}"),
            workers=w,
            shard_size=bench.args.ray_shard_size,
        )
        for w in RAY_WORKERS
    }
    return {"passages": stats["documents"], "by_workers": runs, **ray_speedup(runs)}


def ray_speedup(runs: dict[str, Row]) -> Row:
    """Speed-up from 1 to 2 workers: from the steady rates when both have one, else
    from the end-to-end rates (which include starting Ray and loading the models)."""
    one, two = runs["1"], runs["2"]
    if one.get("steady_passages_per_s") and two.get("steady_passages_per_s"):
        speedup = two["steady_passages_per_s"] / one["steady_passages_per_s"]
        basis = "steady rate after the first round of shards"
    else:
        speedup = two["end_to_end_passages_per_s"] / one["end_to_end_passages_per_s"]
        basis = "end-to-end rate (too few shards for a steady rate)"
    return {"speedup": speedup, "efficiency": speedup / 2, "efficiency_basis": basis}


MEASURES: dict[str, Callable[[Bench, Any], Row | None]] = {
    "ingest": measure_ingest,
    "bm25": measure_bm25,
    "bm25_mmap": measure_bm25_mmap,
    "dense": measure_dense,
    "qdrant": measure_qdrant,
    "qdrant_edge": measure_qdrant_edge,
    "qdrant_edge_flat": measure_qdrant_edge_flat,
    "embed": measure_embed,
    "ray": measure_ray,
}


# ---- report ----------------------------------------------------------------------------


def report_machine() -> Row:
    return {
        **machine(),
        "packages": {p: package_version(p) for p in PACKAGES},
        "load_average_at_report": loadavg(),
    }


def write_report(rows_path: Path, out: Path, args: argparse.Namespace) -> None:
    """``capacity_report.py`` over every row so far: ``out`` and ``capacity.md`` beside it."""
    meta = write_json(
        args.work / "report_meta.json",
        {
            "benchmark": "capacity",
            "command": command(),
            "machine": report_machine(),
            "notes": NOTES,
        },
    )
    argv = [sys.executable, str(REPORT_SCRIPT), "--rows", str(rows_path)]
    argv += ["--meta", str(meta), "--out", str(out)]
    if args.node_ram_gb is not None:
        argv += ["--node-ram-gb", str(args.node_ram_gb)]
    if run_child(argv).returncode != 0:
        raise SystemExit(f"capacity_report.py could not write {out}: see the error above")


# ---- command line ----------------------------------------------------------------------


def parse_args(argv: list[str] | None = None) -> argparse.Namespace:
    parser = argparse.ArgumentParser(description=" ".join(__doc__.split("\n\n")[0].split()))
    add = parser.add_argument
    add("--sizes", type=int, nargs="+", required=True, help="corpus sizes N (passages)")
    add("--work", type=Path, required=True, help="corpora, indexes and rows.jsonl")
    add("--out", type=Path, required=True, help="the JSON report (capacity.md beside it)")
    add("--queries", type=int, default=200, help="SciFact test claims timed per index")
    add("--embed-sample", type=int, default=2000, help="passages the embedder is timed on")
    add("--qdrant-max", type=int, default=100_000, help="largest N for Qdrant local mode")
    add("--edge-max", type=int, default=2_000_000, help="largest N for Qdrant Edge")
    add(
        "--edge-flat-max",
        type=int,
        default=2_000_000,
        help="largest N for Qdrant Edge without an HNSW graph",
    )
    add(
        "--real-corpora",
        type=Path,
        nargs="+",
        default=[ROOT / "corpora" / n for n in ("scifact", "nfcorpus-dev", "pubmedqa-dev")],
        help="indexed corpora whose dense vectors shape Qdrant Edge's vectors",
    )
    add("--ray-sample", type=int, default=1000, help="passages embedded on Ray")
    add("--ray-shard-size", type=int, default=256)
    add(
        "--steps",
        nargs="+",
        choices=(*SIZED_STEPS, *ONCE_STEPS),
        default=[*SIZED_STEPS, *ONCE_STEPS],
    )
    add("--limit-minutes", type=float, default=None, help="stop between steps after this")
    add("--seed", type=int, default=0, help="of the synthetic corpora and random vectors")
    add("--node-ram-gb", type=float, help="RAM per machine in the plan (capacity_report's 64)")
    add(
        "--keep-dense",
        action="store_true",
        help="keep the saved faiss indexes and Qdrant Edge shards (random vectors)",
    )
    return parser.parse_args(argv)


def main(argv: list[str] | None = None) -> None:
    args = parse_args(argv)
    started = time.monotonic()

    def log(message: str) -> None:
        print(f"[{time.monotonic() - started:8.1f} s] {message}", file=sys.stderr, flush=True)

    bench = Bench(args, log)
    rows_path = args.work / "rows.jsonl"

    def measure(size: int | None, step: str) -> Row | None:
        log(f"N={size} {step}: running")
        load_before, start = loadavg(), time.perf_counter()
        row = MEASURES[step](bench, size)
        if row is None:
            return None
        seconds = time.perf_counter() - start
        log(f"N={size} {step}: done in {seconds:.1f} s")
        return {
            **row,
            "step_seconds": round(seconds, 2),
            "load_before": load_before,
            "load_after": loadavg(),
            "measured_at": datetime.now(UTC).isoformat(timespec="seconds"),
        }

    deadline = started + args.limit_minutes * 60 if args.limit_minutes is not None else None
    args.work.mkdir(parents=True, exist_ok=True)
    run_schedule(
        schedule(args.sizes, args.steps),
        rows_path,
        measure,
        deadline,
        log,
        after_step=lambda: write_report(rows_path, args.out, args),
    )
    write_report(rows_path, args.out, args)
    log(f"wrote {args.out} and {args.out.with_suffix('.md')}")


if __name__ == "__main__":
    main()
