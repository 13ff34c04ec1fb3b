"""Qdrant's own engine in the capacity model: sciera's qdrant engine on Qdrant Edge
(``index.qdrant_local: edge``, ``pip install qdrant-edge-py``), the Rust shard a Qdrant
server runs, in process, with no server binary.

The collection is built by sciera's own ``build_qdrant`` (BM25 sparse vectors with the
``IDF`` modifier, passages in the payloads) and searched through ``QdrantEngine``. Dense
vectors: embedding N passages would take days, and HNSW, unlike the ``dense`` step's
exact search, depends on the vectors' distribution (isotropic random 384-d vectors, its
worst case, gave recall@10 0.13 at 100k), so they are drawn from a Gaussian with the mean
and covariance of real passage embeddings (:func:`fit_vector_model`: the default
embedder's vectors in the dense indexes of the corpora under ``corpora/``), then
normalised: the real spectrum (few directions carry most variance), without the real
clusters, so HNSW recall here is still a lower bound. Two child steps (see
``capacity_steps.py``):

- ``qdrant_edge_build``: the vocabulary pass and the upserts, then the store's ``finish``
  (flush, ``optimize()``: segments merged, the HNSW graph and the sparse inverted index
  built; timed as ``index_seconds``); disk; the shard's own report (``info()``).
- with ``hnsw_m`` 0 (the ``qdrant_edge_flat`` step) no HNSW graph is built: the sparse
  index alone, dense search exact, which is what a large BM25-first collection costs.
- ``qdrant_edge_query``: open the engine (time, RSS delta), then single queries through
  it, k=10: dense (HNSW, default ``hnsw_ef``), sparse BM25, hybrid (two prefetches of
  ``retrieve.passage_depth`` fused by RRF); on the shard itself, exact dense search and HNSW
  recall@10 against it on the same random query vectors; and, when the store has a bm25s
  index, BM25 parity: the engine's BM25 top-10 against bm25s' on the same claims.

"""

from __future__ import annotations

import time
from collections.abc import Sequence
from pathlib import Path
from typing import Any

import numpy as np
from capacity_steps import (
    WARMUP,
    K,
    disk_bytes,
    latency_ms,
    package_version,
    prefixed,
    preload,
    proc_rss,
    test_claims,
)

ENGINE = "qdrant-edge"
PARITY_TOL = 1e-4
VECTOR_MODEL = "vector_model.npz"


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
    import shutil

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
        stats = latency_ms(lambda q, kind=kind: engine.search(kind, [q], K), claims)
        row.update(prefixed(stats, name))
    if hnsw_m > 0:  # without a graph the dense search above is the exact one
        row.update(_exact_and_recall(engine.store.shard, embedder.sample(len(claims))))
    row["queried_rss_delta_mb"] = proc_rss()["rss_mb"] - before["rss_mb"]
    row.update(_bm25_parity(corpus, claims[WARMUP:], engine))
    engine.close()
    return row


HNSW_EFS = (64, 128, 256, 512)


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
    stats = latency_ms(lambda v: dense(v, exact_params), probes)
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
        timing = latency_ms(lambda v, params=params: dense(v, params), probes)
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
