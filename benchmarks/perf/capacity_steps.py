"""The measurements of ``capacity.py``, each run in a child process of its own:

    python benchmarks/perf/capacity_steps.py STEP '{"arg": ...}' RESULT.json

The parent reads the child's peak RSS from ``os.wait4``; a step reports RSS at points
inside the run from ``/proc/self/status`` (``VmRSS``, and its anonymous / file-backed
parts, in MB = 10^6 bytes). Latencies are single queries, k=10, after 5 warm-up queries.

Qdrant's own engine: the ``qdrant_edge_*`` steps run sciera's qdrant engine on Qdrant Edge
(``index.qdrant_local: edge``, ``pip install qdrant-edge-py``), the Rust shard a Qdrant
server runs, in process, with no server binary. The collection is built by sciera's own
``build_qdrant`` (BM25 sparse vectors with the ``IDF`` modifier, passages in the payloads)
and searched through ``QdrantEngine``. Dense vectors: embedding N passages would take days,
and HNSW, unlike the ``dense`` step's exact search, depends on the vectors' distribution
(isotropic random 384-d vectors, its worst case, gave recall@10 0.13 at 100k), so they are
drawn from a Gaussian with the mean and covariance of real passage embeddings (the
``vector_model`` step: the default embedder's vectors in the dense indexes of the corpora
under ``corpora/``), then normalised: the real spectrum (few directions carry most
variance), without the real clusters, so HNSW recall here is still a lower bound.

- ``qdrant_edge_build``: the vocabulary pass and the upserts, then the store's ``finish``
  (flush, ``optimize()``: segments merged, the HNSW graph and the sparse inverted index
  built; timed as ``index_seconds``); disk; the shard's own report (``info()``). With
  ``hnsw_m`` 0 (the ``qdrant_edge_flat`` step) no HNSW graph is built: the sparse index
  alone, dense search exact, which is what a large BM25-first collection costs.
- ``qdrant_edge_query``: open the engine (time, RSS delta), then single queries through
  it, k=10: dense (HNSW, default ``hnsw_ef``), sparse BM25, hybrid (two prefetches of
  ``retrieve.passage_depth`` fused by RRF); on the shard itself, exact dense search and HNSW
  recall@10 against it on the same random query vectors; and, when the store has a bm25s
  index, BM25 parity: the engine's BM25 top-10 against bm25s' on the same claims.
"""

from __future__ import annotations

import argparse
import importlib
import json
import os
import shutil
import time
from collections.abc import Callable, Sequence
from pathlib import Path
from typing import Any

import numpy as np

from common import DATA, latency_ms, memory, package_version

WARMUP = 5
K = 10
DIM = 384
VECTOR_CHUNK = 65_536
SCIFACT = DATA / "scifact"
ENGINE = "qdrant-edge"
PARITY_TOL = 1e-4
HNSW_EFS = (64, 128, 256, 512)


# ---- helpers ---------------------------------------------------------------------------


def proc_rss() -> dict[str, float]:
    """This process's resident memory in MB: total, anonymous and file-backed."""
    names = {"rss": "rss_mb", "anon": "rss_anon_mb", "file": "rss_file_mb"}
    return {names[k]: v / 1e6 for k, v in memory().items() if k in names}


def disk_bytes(path: Path) -> int:
    """Bytes allocated on disk under ``path`` (what ``du`` counts)."""
    if path.is_file():
        return path.stat().st_blocks * 512
    return sum(
        (Path(root) / name).stat().st_blocks * 512
        for root, _, names in os.walk(path)
        for name in names
    )


def latency(run: Callable[[Any], object], items: Sequence[Any]) -> dict[str, float]:
    """p50, p95 and mean milliseconds of ``run(item)`` over ``items`` (the first
    :data:`WARMUP` items are run first and not counted)."""
    return latency_ms(run, items, WARMUP)


def preload(*modules: str) -> None:
    """Import what opening an index imports lazily, so its RSS delta is the index's."""
    for name in modules:
        importlib.import_module(name)


def prefixed(stats: dict[str, float], prefix: str) -> dict[str, float]:
    return {f"{prefix}_{k}": v for k, v in stats.items()}


def test_claims(n: int, data: Path = SCIFACT) -> list[str]:
    """``n`` SciFact test claims (qrels/test.tsv), in file order, plus the warm-up ones."""
    with open(data / "qrels" / "test.tsv", encoding="utf-8") as qrels:
        ids = {line.split("\t")[0] for line in list(qrels)[1:]}
    claims = []
    with open(data / "queries.jsonl", encoding="utf-8") as lines:
        for line in lines:
            query = json.loads(line)
            if query["_id"] in ids:
                claims.append(query["text"])
    return claims[: n + WARMUP]


def random_unit(rng: np.random.Generator, n: int, dim: int = DIM) -> np.ndarray:
    vectors = rng.standard_normal((n, dim), dtype=np.float32)
    return vectors / np.linalg.norm(vectors, axis=1, keepdims=True)


class RandomUnitEmbedder:
    """Stands in for the embedder where embedding N passages would take days: random
    unit vectors of the default embedder's dimension, deterministic for a seed."""

    name = "random-unit"
    dim = DIM

    def __init__(self, seed: int) -> None:
        self._rng = np.random.default_rng(seed)

    def embed_queries(self, texts: Sequence[str]) -> np.ndarray:
        return random_unit(self._rng, len(texts))

    def embed_passages(self, texts: Sequence[str], progress: Any = None) -> np.ndarray:
        return random_unit(self._rng, len(texts))


def _passage_count(corpus: Path) -> int:
    from sciera.corpus import PassageStore

    with PassageStore.open(corpus) as store:
        return store.count_passages()


def steady_rate(marks: Sequence[tuple[float, int]], workers: int) -> float | None:
    """Passages/s after the first round of shards (one per worker) finished, from the
    ``(seconds, passages done)`` progress marks; None without a shard after that round."""
    if len(marks) <= workers:
        return None
    (t0, done0), (t1, done1) = marks[workers - 1], marks[-1]
    return (done1 - done0) / (t1 - t0) if t1 > t0 else None


# ---- steps -----------------------------------------------------------------------------


def ingest_step(src: str, corpus: str) -> dict[str, Any]:
    """Ingest the synthetic BEIR folder into a fresh passage store."""
    from sciera.corpus import ingest

    shutil.rmtree(corpus, ignore_errors=True)
    report = ingest(src, corpus, format="beir")
    return {
        "documents": report.added,
        "passages": report.passages,
        "seconds": report.seconds,
        "passages_per_s": report.passages_per_second,
        "store_disk_bytes": disk_bytes(Path(corpus)),
    }


def bm25_build_step(corpus: str) -> dict[str, Any]:
    """``build_indexes(..., which=("bm25",))`` with the default settings."""
    from sciera.retrieve import build_indexes
    from sciera.retrieve.manifest import index_dir
    from sciera.settings import load_settings

    preload("bm25s", "Stemmer")
    rss = proc_rss()["rss_mb"]
    start = time.perf_counter()
    build_indexes(corpus, load_settings(), which=("bm25",))
    seconds = time.perf_counter() - start
    return {
        "passages": _passage_count(Path(corpus)),
        "rss_before_build_mb": rss,
        "build_seconds": seconds,
        "disk_bytes": disk_bytes(index_dir(Path(corpus)) / "bm25"),
    }


def bm25_query_step(corpus: str, queries: int) -> dict[str, Any]:
    """Open the BM25 retriever (load time, RSS delta) and time single queries: ``search``
    (scores plus the passages from the store) and ``search_hits`` (scores only)."""
    from sciera.retrieve import open_retriever
    from sciera.retrieve.bm25 import BM25Retriever
    from sciera.settings import load_settings

    claims = test_claims(queries)
    preload("bm25s", "Stemmer")
    before = proc_rss()
    start = time.perf_counter()
    retriever = open_retriever(corpus, "bm25", load_settings())
    load_seconds = time.perf_counter() - start
    after = proc_rss()
    assert isinstance(retriever, BM25Retriever)
    search = latency(lambda q: retriever.search(q, K), claims)
    score = latency(lambda q: retriever.search_hits([q], K), claims)
    return {
        "load_seconds": load_seconds,
        "rss_before_load_mb": before["rss_mb"],
        "rss_after_load_mb": after["rss_mb"],
        "load_rss_delta_mb": after["rss_mb"] - before["rss_mb"],
        **prefixed(search, "search"),
        **prefixed(score, "score"),
    }


def bm25_mmap_step(corpus: str, queries: int) -> dict[str, Any]:
    """The saved bm25s index loaded with ``mmap=True``, queried through bm25s directly
    with sciera's tokenizer and vocabulary (token ids as sciera's retriever sends them)."""
    import bm25s

    from sciera.retrieve.bm25 import SETTINGS_FILE
    from sciera.retrieve.manifest import index_dir
    from sciera.retrieve.tokenize import BM25Tokenizer
    from sciera.settings import BM25Settings

    path = index_dir(Path(corpus)) / "bm25"
    settings = BM25Settings.model_validate_json((path / SETTINGS_FILE).read_text("utf-8"))
    tokenizer = BM25Tokenizer(settings)
    claims = test_claims(queries)
    before = proc_rss()
    start = time.perf_counter()
    model = bm25s.BM25.load(str(path), mmap=True, backend="numpy", show_progress=False)
    load_seconds = time.perf_counter() - start
    after = proc_rss()
    vocab = model.vocab_dict
    token_ids = [[vocab[t] for t in tokenizer.tokens(q) if t in vocab] for q in claims]
    token_ids = [ids for ids in token_ids if ids]
    score = latency(lambda ids: model.retrieve([ids], k=K, show_progress=False), token_ids)
    queried = proc_rss()
    return {
        "passages": int(model.scores["num_docs"]),
        "load_seconds": load_seconds,
        "rss_before_load_mb": before["rss_mb"],
        "rss_after_load_mb": after["rss_mb"],
        "load_rss_delta_mb": after["rss_mb"] - before["rss_mb"],
        "queried_rss_delta_mb": queried["rss_mb"] - before["rss_mb"],
        "queried_rss_file_mb": queried.get("rss_file_mb"),
        **prefixed(score, "score"),
    }


def dense_step(n: int, out: str, queries: int, seed: int, keep: bool) -> dict[str, Any]:
    """sciera's ``FaissIndex`` (IndexFlatIP) over ``n`` random unit vectors: add time,
    RSS delta (vectors plus the index's id list and set), disk via ``save``, latency of
    one query vector. The index is deleted afterwards unless ``keep``."""
    import faiss

    from sciera.vectors.faiss_index import FaissIndex

    rng = np.random.default_rng(seed)
    before = proc_rss()
    index = FaissIndex(DIM)
    add_seconds = 0.0
    for lo in range(0, n, VECTOR_CHUNK):
        m = min(VECTOR_CHUNK, n - lo)
        vectors = random_unit(rng, m)
        ids = [f"p{i}" for i in range(lo, lo + m)]
        start = time.perf_counter()
        index.add(ids, vectors)
        add_seconds += time.perf_counter() - start
    del vectors, ids
    after = proc_rss()
    start = time.perf_counter()
    index.save(out)
    save_seconds = time.perf_counter() - start
    size = disk_bytes(Path(out))
    if not keep:
        shutil.rmtree(out)
    probes = list(random_unit(rng, queries + WARMUP))
    stats = latency(lambda q: index.search(q, K), probes)
    return {
        "passages": n,
        "add_seconds": add_seconds,
        "rss_delta_mb": after["rss_mb"] - before["rss_mb"],
        "vectors_mb": n * DIM * 4 / 1e6,
        "save_seconds": save_seconds,
        "disk_bytes": size,
        "faiss_threads": faiss.omp_get_max_threads(),
        **stats,
    }


def qdrant_build_step(corpus: str, out: str, seed: int) -> dict[str, Any]:
    """sciera's Qdrant engine (``build_qdrant``) in local mode, with random unit dense
    vectors and the real BM25 sparse vectors (IDF modifier), into ``out``."""
    from sciera.corpus import PassageStore
    from sciera.retrieve.qdrant_engine import build_qdrant
    from sciera.settings import load_settings

    shutil.rmtree(out, ignore_errors=True)
    preload("bm25s", "Stemmer", "qdrant_client", "qdrant_client.local.qdrant_local")
    rss = proc_rss()["rss_mb"]
    with PassageStore.open(corpus) as store:
        total = store.count_passages()
        start = time.perf_counter()
        build_qdrant(
            store.iter_passages,
            Path(out),
            load_settings(),
            RandomUnitEmbedder(seed),
            total,
            "capacity",
        )
        seconds = time.perf_counter() - start
    return {
        "passages": total,
        "rss_before_build_mb": rss,
        "build_seconds": seconds,
        "disk_bytes": disk_bytes(Path(out)),
    }


def qdrant_query_step(out: str, queries: int, seed: int) -> dict[str, Any]:
    """Open the engine (RSS delta: local mode loads the collection) and time single
    dense, sparse (BM25) and hybrid (two prefetches fused by RRF) queries."""
    from sciera.retrieve.qdrant_engine import QdrantEngine
    from sciera.settings import load_settings

    claims = test_claims(queries)
    preload("qdrant_client", "qdrant_client.local.qdrant_local")
    before = proc_rss()
    start = time.perf_counter()
    engine = QdrantEngine(Path(out), load_settings(), RandomUnitEmbedder(seed + 1))
    load_seconds = time.perf_counter() - start
    after = proc_rss()
    row: dict[str, Any] = {
        "load_seconds": load_seconds,
        "load_rss_delta_mb": after["rss_mb"] - before["rss_mb"],
    }
    for kind, name in (("dense", "dense"), ("bm25", "sparse"), ("hybrid", "hybrid")):
        stats = latency(lambda q, kind=kind: engine.search(kind, [q], K), claims)
        row.update(prefixed(stats, name))
    engine.close()
    return row


def embed_step(src: str) -> dict[str, Any]:
    """The default embedder's throughput on the synthetic passages of ``src/corpus.jsonl``
    (title and body, as indexed) with 2 torch threads, then 1; a 32-passage warm-up first."""
    import torch

    from sciera.embed.registry import create_embedder
    from sciera.settings import load_settings
    from sciera.types import Passage

    with open(Path(src) / "corpus.jsonl", encoding="utf-8") as lines:
        docs = [json.loads(line) for line in lines]
    texts = [Passage(d["_id"] + "#0", d["_id"], 0, d["title"], d["text"]).contents for d in docs]
    settings = load_settings()
    start = time.perf_counter()
    embedder = create_embedder(settings.embed, settings.home)
    load_seconds = time.perf_counter() - start
    threads: dict[str, dict[str, float]] = {}
    for n in (2, 1):
        torch.set_num_threads(n)
        embedder.embed_passages(texts[:32])
        start = time.perf_counter()
        embedder.embed_passages(texts)
        seconds = time.perf_counter() - start
        threads[str(n)] = {"seconds": seconds, "passages_per_s": len(texts) / seconds}
    return {
        "embedder": embedder.name,
        "batch_size": settings.embed.batch_size,
        "sample": len(texts),
        "load_seconds": load_seconds,
        "threads": threads,
    }


def ray_step(corpus: str, home: str, workers: int, shard_size: int) -> dict[str, Any]:
    """``embed_on_ray`` on a local Ray cluster with ``workers`` actors and an empty
    embedding cache (a fresh ``home``), with progress marks for the steady rate."""
    from sciera.scale.embed import embed_on_ray
    from sciera.settings import load_settings

    shutil.rmtree(home, ignore_errors=True)
    settings = load_settings(home=home)
    marks: list[tuple[float, int]] = []
    start = time.perf_counter()

    def progress(done: int, total: int) -> None:
        marks.append((time.perf_counter() - start, done))

    stats = embed_on_ray(
        corpus, settings, "local", workers=workers, shard_size=shard_size, progress=progress
    )
    return {
        "workers": stats["workers"],
        "embedder": settings.embed.backend,
        "embedded": stats["embedded"],
        "shards": stats["shards"],
        "seconds": stats["seconds"],
        "end_to_end_passages_per_s": stats["embedded"] / stats["seconds"],
        "steady_passages_per_s": steady_rate(marks, workers),
        "marks": [(round(t, 3), d) for t, d in marks],
    }


# ---- Qdrant Edge -----------------------------------------------------------------------


def fit_vector_model(corpora: Sequence[Path], out: Path) -> dict[str, Any]:
    """Mean and covariance of the vectors in each corpus's dense index (``index/dense-*``,
    one embedder: the first found), saved to ``out``; returns where they came from."""
    import faiss

    blocks, sources, embedder = [], [], None
    for corpus in corpora:
        for folder in sorted((corpus / "index").glob("dense-*")):
            name = folder.name.removeprefix("dense-")
            if embedder not in (None, name) or not (folder / "index.faiss").exists():
                continue
            index = faiss.read_index(str(folder / "index.faiss"))
            blocks.append(index.reconstruct_n(0, index.ntotal))
            sources.append({"corpus": corpus.name, "vectors": int(index.ntotal)})
            embedder = name
    if not blocks:
        raise SystemExit(f"no dense index under {[str(c) for c in corpora]}: run sciera index")
    real = np.concatenate(blocks).astype(np.float64)
    mean, cov = real.mean(axis=0), np.cov(real, rowvar=False)
    eig = np.clip(np.linalg.eigvalsh(cov), 0.0, None)
    stats = {
        "embedder": embedder,
        "sources": sources,
        "vectors": len(real),
        "participation_ratio": float(eig.sum() ** 2 / (eig**2).sum()),
    }
    np.savez(out, mean=mean, cov=cov)
    return stats


def vector_model_step(corpora: list[str], out: str) -> dict[str, Any]:
    return fit_vector_model([Path(c) for c in corpora], Path(out))


class ModelEmbedder:
    """Unit vectors drawn from the fitted Gaussian, deterministic for a seed."""

    name = "real-spectrum"

    def __init__(self, path: Path, seed: int) -> None:
        fitted = np.load(path)
        self.mean = fitted["mean"]
        cov = fitted["cov"]
        self.root = np.linalg.cholesky(cov + 1e-9 * np.eye(len(cov)))
        self.dim = len(self.mean)
        self._rng = np.random.default_rng(seed)

    def sample(self, n: int) -> np.ndarray:
        z = self._rng.standard_normal((n, self.dim))
        x = (self.mean + z @ self.root.T).astype(np.float32)
        return x / np.linalg.norm(x, axis=1, keepdims=True)

    def embed_queries(self, texts: Sequence[str]) -> np.ndarray:
        return self.sample(len(texts))

    def embed_passages(self, texts: Sequence[str], progress: Any = None) -> np.ndarray:
        return self.sample(len(texts))


def _settings(hnsw_m: int) -> Any:
    from sciera.settings import load_settings

    return load_settings(
        index={"engine": "qdrant", "qdrant_local": "edge", "qdrant_hnsw_m": hnsw_m}
    )


def qdrant_edge_build_step(
    corpus: str, out: str, seed: int, vectors: str, hnsw_m: int = 16
) -> dict[str, Any]:
    import qdrant_edge

    from sciera.corpus import PassageStore
    from sciera.retrieve.qdrant_engine import EDGE_DIR, build_qdrant

    shutil.rmtree(out, ignore_errors=True)
    preload("bm25s", "Stemmer", "qdrant_edge")
    marks: list[float] = []  # build_qdrant's indexing(0, 1) and indexing(1, 1)
    rss = proc_rss()["rss_mb"]
    with PassageStore.open(corpus) as store:
        total = store.count_passages()
        start = time.perf_counter()
        params = build_qdrant(
            store.iter_passages,
            Path(out),
            _settings(hnsw_m),
            ModelEmbedder(Path(vectors), seed),
            total,
            "capacity",
            indexing=lambda done, of: marks.append(time.perf_counter()),
        )
        seconds = time.perf_counter() - start
    disk = disk_bytes(Path(out))
    shard = qdrant_edge.EdgeShard.load(str(Path(out) / EDGE_DIR))
    info = shard.info()
    shard.close()
    index_seconds = marks[1] - marks[0]
    return {
        "passages": total,
        "points": params["points"],
        "engine": ENGINE,
        "hnsw_m": hnsw_m,
        "edge_version": package_version("qdrant-edge-py"),
        "rss_before_build_mb": rss,
        "build_seconds": seconds,
        "index_seconds": index_seconds,
        "upsert_seconds": seconds - index_seconds,
        "disk_bytes": disk,
        "segments_count": int(info.segments_count),
        "indexed_vectors_count": int(info.indexed_vectors_count),
    }


def qdrant_edge_query_step(
    out: str, queries: int, seed: int, corpus: str, vectors: str, hnsw_m: int = 16
) -> dict[str, Any]:
    from sciera.retrieve.qdrant_engine import QdrantEngine

    claims = test_claims(queries)
    preload("bm25s", "Stemmer", "qdrant_edge")
    before = proc_rss()
    start = time.perf_counter()
    embedder = ModelEmbedder(Path(vectors), seed + 1)
    engine = QdrantEngine(Path(out), _settings(hnsw_m), embedder)
    load_seconds = time.perf_counter() - start
    after = proc_rss()
    row: dict[str, Any] = {
        "engine": ENGINE,
        "load_seconds": load_seconds,
        "load_rss_delta_mb": after["rss_mb"] - before["rss_mb"],
    }
    for kind, name in (("dense", "dense"), ("bm25", "sparse"), ("hybrid", "hybrid")):
        stats = latency(lambda q, kind=kind: engine.search(kind, [q], K), claims)
        row.update(prefixed(stats, name))
    if hnsw_m > 0:  # without a graph the dense search above is the exact one
        row.update(_exact_and_recall(engine.store.shard, embedder.sample(len(claims))))
    row["queried_rss_delta_mb"] = proc_rss()["rss_mb"] - before["rss_mb"]
    row.update(_bm25_parity(corpus, claims[WARMUP:], engine))
    engine.close()
    return row


def _exact_and_recall(shard: Any, vectors: np.ndarray) -> dict[str, Any]:
    """Exact dense search on the shard, and HNSW recall@10 against it for these query
    vectors: at Qdrant's default ``hnsw_ef`` and, with latency, at each of
    :data:`HNSW_EFS` (the search-time knob a user turns for recall)."""
    import qdrant_edge as q

    from sciera.retrieve.qdrant_store import DENSE

    probes = [v.tolist() for v in vectors]

    def dense(vector: list[float], params: Any = None) -> list:
        query = q.Query.Nearest(vector, using=DENSE)
        return shard.query(q.QueryRequest(query=query, limit=K, params=params))

    exact_params = q.SearchParams(exact=True)
    stats = latency(lambda v: dense(v, exact_params), probes)
    truth = [{p.id for p in dense(v, exact_params)} for v in probes[WARMUP:]]

    def recall(params: Any) -> float:
        found = [
            len({p.id for p in dense(v, params)} & t) / K
            for v, t in zip(probes[WARMUP:], truth, strict=True)
        ]
        return float(np.mean(found))

    sweep = {}
    for ef in HNSW_EFS:
        params = q.SearchParams(hnsw_ef=ef)
        timing = latency(lambda v, params=params: dense(v, params), probes)
        sweep[str(ef)] = {"recall_at_10": recall(params), "p50_ms": timing["p50_ms"]}
    return {
        **prefixed(stats, "dense_exact"),
        "hnsw_recall_at_10": recall(None),
        "hnsw_ef_sweep": sweep,
    }


def _bm25_parity(corpus: str, claims: Sequence[str], engine: Any) -> dict[str, Any]:
    """The engine's BM25 top-10 against bm25s' on ``claims`` (needs the store's bm25s
    index): the largest score difference at equal rank, and the claims whose ids differ
    beyond ties at the 10th score."""
    from sciera.retrieve import open_retriever
    from sciera.retrieve.manifest import index_dir
    from sciera.settings import load_settings

    if not (index_dir(Path(corpus)) / "bm25").exists():
        return {"bm25_parity": "no bm25s index in the store"}
    reference = open_retriever(corpus, "bm25", load_settings(index={"engine": "embedded"}))
    worst, differing = 0.0, 0
    for claim in claims:
        ours = [(i.passage_id, i.score) for i in engine.search("bm25", [claim], K)[0]]
        theirs = reference.search_hits([claim], K)[0]
        for (_, a), (_, b) in zip(ours, theirs, strict=False):
            worst = max(worst, abs(a - b))
        cut = theirs[-1][1] if theirs else 0.0
        above = [{pid for pid, s in hits if s > cut + PARITY_TOL} for hits in (ours, theirs)]
        differing += len(ours) != len(theirs) or above[0] != above[1]
    return {
        "bm25_parity_claims": len(claims),
        "bm25_parity_max_abs_diff": worst,
        "bm25_parity_claims_differing": differing,
    }


STEPS: dict[str, Callable[..., dict[str, Any]]] = {
    "ingest": ingest_step,
    "bm25_build": bm25_build_step,
    "bm25_query": bm25_query_step,
    "bm25_mmap": bm25_mmap_step,
    "dense": dense_step,
    "qdrant_build": qdrant_build_step,
    "qdrant_query": qdrant_query_step,
    "vector_model": vector_model_step,
    "qdrant_edge_build": qdrant_edge_build_step,
    "qdrant_edge_query": qdrant_edge_query_step,
    "embed": embed_step,
    "ray": ray_step,
}


def main() -> None:
    parser = argparse.ArgumentParser(description="One measurement of capacity.py.")
    parser.add_argument("step", choices=STEPS)
    parser.add_argument("args", type=json.loads, help="the step's arguments, a JSON object")
    parser.add_argument("result", type=Path, help="where its row is written (JSON)")
    args = parser.parse_args()
    row = STEPS[args.step](**args.args)
    args.result.write_text(json.dumps(row), encoding="utf-8")


if __name__ == "__main__":
    main()
