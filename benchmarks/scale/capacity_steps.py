"""The measurements of ``capacity.py``, each run in a child process of its own:

    python benchmarks/scale/capacity_steps.py STEP '{"arg": ...}' RESULT.json

The parent reads the child's peak RSS from ``os.wait4``; a step reports RSS at points
inside the run from ``/proc/self/status`` (``VmRSS``, and its anonymous / file-backed
parts, in MB = 10^6 bytes). Latencies are single queries, k=10, after 5 warm-up queries.
"""

from __future__ import annotations

import importlib
import json
import os
import shutil
import sys
import time
from collections.abc import Callable, Sequence
from pathlib import Path
from typing import Any

import numpy as np

WARMUP = 5
K = 10
DIM = 384
VECTOR_CHUNK = 65_536
SCIFACT = Path(__file__).resolve().parents[3] / "shared" / "data" / "scifact"


# ---- helpers ---------------------------------------------------------------------------


def proc_rss() -> dict[str, float]:
    """This process's resident memory in MB: total, anonymous and file-backed."""
    fields = {"VmRSS": "rss_mb", "RssAnon": "rss_anon_mb", "RssFile": "rss_file_mb"}
    out: dict[str, float] = {}
    with open("/proc/self/status", encoding="ascii") as status:
        for line in status:
            key, _, value = line.partition(":")
            if key in fields:
                out[fields[key]] = int(value.split()[0]) * 1024 / 1e6
    return out


def disk_bytes(path: Path) -> int:
    """Bytes allocated on disk under ``path`` (what ``du`` counts)."""
    if path.is_file():
        return path.stat().st_blocks * 512
    return sum(
        (Path(root) / name).stat().st_blocks * 512
        for root, _, names in os.walk(path)
        for name in names
    )


def latency_ms(run: Callable[[Any], object], items: Sequence[Any]) -> dict[str, float]:
    """p50, p95 and mean milliseconds of ``run(item)`` over ``items`` (the first
    :data:`WARMUP` items are run first and not counted)."""
    for item in items[:WARMUP]:
        run(item)
    times = []
    for item in items[WARMUP:]:
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


def package_version(package: str) -> str | None:
    from importlib import metadata

    try:
        return metadata.version(package)
    except metadata.PackageNotFoundError:
        return None


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
    search = latency_ms(lambda q: retriever.search(q, K), claims)
    score = latency_ms(lambda q: retriever.search_hits([q], K), claims)
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
    score = latency_ms(lambda ids: model.retrieve([ids], k=K, show_progress=False), token_ids)
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
    stats = latency_ms(lambda q: index.search(q, K), probes)
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
        stats = latency_ms(lambda q, kind=kind: engine.search(kind, [q], K), claims)
        row.update(prefixed(stats, name))
    engine.close()
    return row


def embed_step(sample: int, seed: int) -> dict[str, Any]:
    """The default embedder's throughput on ``sample`` synthetic passages (title and
    body, as indexed) with 2 torch threads, then 1; a 32-passage warm-up first."""
    import torch
    from synthetic_corpus import generate, real_abstracts, sentence_pool

    from sciera.embed.registry import create_embedder
    from sciera.settings import load_settings
    from sciera.types import Passage

    pool = sentence_pool(real_abstracts())
    texts = [
        Passage(d["_id"] + "#0", d["_id"], 0, d["title"], d["text"]).contents
        for d, _, _ in generate(pool, sample, seed + 1)
    ]
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
    from capacity_model import steady_rate

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


def qdrant_edge_build(**args: Any) -> dict[str, Any]:
    from capacity_edge import qdrant_edge_build_step

    return qdrant_edge_build_step(**args)


def qdrant_edge_query(**args: Any) -> dict[str, Any]:
    from capacity_edge import qdrant_edge_query_step

    return qdrant_edge_query_step(**args)


STEPS: dict[str, Callable[..., dict[str, Any]]] = {
    "ingest": ingest_step,
    "bm25_build": bm25_build_step,
    "bm25_query": bm25_query_step,
    "bm25_mmap": bm25_mmap_step,
    "dense": dense_step,
    "qdrant_build": qdrant_build_step,
    "qdrant_query": qdrant_query_step,
    "qdrant_edge_build": qdrant_edge_build,
    "qdrant_edge_query": qdrant_edge_query,
    "embed": embed_step,
    "ray": ray_step,
}


def main() -> None:
    step, args, result = sys.argv[1], json.loads(sys.argv[2]), Path(sys.argv[3])
    row = STEPS[step](**args)
    result.write_text(json.dumps(row), encoding="utf-8")


if __name__ == "__main__":
    main()
