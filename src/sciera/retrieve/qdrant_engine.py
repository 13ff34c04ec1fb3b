"""The whole index in one Qdrant collection (``index.engine: qdrant``): dense vectors and
BM25 sparse vectors side by side, passage texts in the payloads, hybrid search fused by
Qdrant itself (two prefetches, reciprocal rank fusion).

Layout: ``DIR/index/qdrant-<embedder>/`` holds ``qdrant_engine.json`` (the collection,
where it lives, dimension, embedder) and ``sparse_bm25.json`` (the BM25 vocabulary and
mean length, :mod:`sciera.retrieve.sparse_bm25`). Where it lives
(:mod:`sciera.retrieve.qdrant_store`): on a server (``vectors.qdrant_url``), else by
``index.qdrant_local``: ``edge`` (the default) in ``edge/`` beside them, Qdrant's own Rust
shard in process (Qdrant Edge: HNSW and a sparse inverted index), or ``client`` in
``qdrant/``, qdrant-client's local mode (Python; every query scans the points). An index
opens with the store its config names.

Each point: integer id (the passage's position in the store), vector ``dense`` (cosine) and
sparse vector ``bm25`` (``IDF`` modifier, so Qdrant computes idf from its own document
frequencies), payload ``passage_id``, ``doc_id``, ``index``, ``title``, ``text``: a result
needs no other store. Shards and replication come from ``index.qdrant_shards`` /
``index.qdrant_replication`` (a server honours them; Edge and local mode have one shard). In a
sharded collection Qdrant computes idf per shard, so BM25 scores there differ slightly
from the single-shard (and bm25s) scores; rankings agree where shards are large.

Retrievers ``bm25``, ``dense`` and ``hybrid`` search the collection; hybrid is plain RRF
over each side's top ``retrieve.passage_depth``, with the embedded path's 1 / (``retrieve.rrf_k`` +
rank) scores (weighted fusion is not offered: Qdrant fuses server side).
"""

from __future__ import annotations

import atexit
import json
import threading
from collections.abc import Callable, Sequence
from pathlib import Path
from typing import Any

from sciera.errors import ScieraError
from sciera.retrieve.qdrant_store import CollectionStore, Point, Search
from sciera.retrieve.sparse_bm25 import SparseBM25
from sciera.settings import Settings
from sciera.types import Passage, Ranking

CONFIG_FILE = "qdrant_engine.json"
LOCAL_DIR = "qdrant"
EDGE_DIR = "edge"
KINDS = ("bm25", "dense", "hybrid")


def qdrant_key(embedder_name: str) -> str:
    return f"qdrant-{embedder_name}"


def qdrant_params(settings: Settings, embedder_name: str) -> dict[str, Any]:
    """What an index must match to be opened with ``settings`` (see the manifest)."""
    from sciera.retrieve.manifest import bm25_params, dense_params

    dense = dense_params(settings, embedder_name)
    dense.pop("vectors", None)
    return {
        "engine": "qdrant",
        **{f"bm25_{k}": v for k, v in bm25_params(settings).items()},
        **dense,
        "qdrant_url": settings.vectors.qdrant_url,
        "local": None if settings.vectors.qdrant_url else settings.index.qdrant_local,
        "hnsw_m": settings.index.qdrant_hnsw_m,
        "shards": settings.index.qdrant_shards,
        "replication": settings.index.qdrant_replication,
    }


def _open_store(settings: Settings, config: dict[str, Any], directory: Path) -> CollectionStore:
    """The store ``config`` (the index's ``qdrant_engine.json``) names."""
    if "edge" in config:
        from sciera.retrieve.qdrant_edge_store import EdgeStore

        return EdgeStore(directory / config["edge"])
    from sciera.retrieve.qdrant_client_store import ClientStore

    local = directory / config["path"] if "path" in config else None
    return ClientStore(settings, config["collection"], local)


class _Shared:
    """Opened stores, one per index folder in this process, counted by their engines: a
    local store (Edge, or qdrant-client's local mode) locks its folder, so a second
    retriever on the same index must share the first one's store, not open it again."""

    def __init__(self) -> None:
        self._lock = threading.Lock()
        self._stores: dict[tuple[Path, int], list[Any]] = {}

    @staticmethod
    def _key(directory: Path) -> tuple[Path, int]:
        # a rebuilt index is a new folder (new inode) at the same path: a new store
        return directory.resolve(), directory.stat().st_ino

    def acquire(self, settings: Settings, config: dict[str, Any], directory: Path) -> Any:
        key = self._key(directory)
        with self._lock:
            entry = self._stores.get(key)
            if entry is None:
                entry = self._stores[key] = [_open_store(settings, config, directory), 0]
            entry[1] += 1
            return key, entry[0]

    def release(self, key: tuple[Path, int]) -> None:
        with self._lock:
            entry = self._stores.get(key)
            if entry is None:
                return
            entry[1] -= 1
            if entry[1] <= 0:
                del self._stores[key]
                entry[0].close()

    def close_all(self) -> None:
        """At exit: close what engines left open (before the interpreter tears down)."""
        with self._lock:
            entries, self._stores = list(self._stores.values()), {}
        for store, _ in entries:
            store.close()


_SHARED = _Shared()
atexit.register(_SHARED.close_all)


def store_config(settings: Settings, collection: str) -> dict[str, Any]:
    """Where the collection lives: a server, Qdrant Edge, or the client's local mode."""
    if settings.vectors.qdrant_url:
        return {"collection": collection, "url": settings.vectors.qdrant_url}
    if settings.index.qdrant_local == "edge":
        return {"collection": collection, "edge": EDGE_DIR}
    return {"collection": collection, "path": LOCAL_DIR}


def build_qdrant(
    passages: Callable[[], Any],
    out: Path,
    settings: Settings,
    embedder: Any,
    total: int,
    collection: str,
    progress: Callable[[int], None] | None = None,
    chunk: int = 1024,
    indexing: Callable[[int, int], None] | None = None,
) -> dict[str, Any]:
    """Write the collection from ``passages()`` (called twice: the BM25 vocabulary pass,
    then the points pass) and the config into ``out``; returns the manifest parameters.
    ``indexing(done, 1)`` brackets the store's final indexing (Edge builds HNSW there)."""
    sparse = SparseBM25.fit((p.contents for p in passages()), settings.bm25)
    out.mkdir(parents=True, exist_ok=True)
    config = store_config(settings, collection)
    store = _open_store(settings, config, out)
    try:
        store.create(embedder.dim, settings.index.qdrant_hnsw_m)
        done, batch = 0, []
        for p in passages():
            batch.append(p)
            if len(batch) == chunk:
                done, batch = _upsert(store, sparse, embedder, batch, done), []
                if progress is not None:
                    progress(done)
        if batch:
            done = _upsert(store, sparse, embedder, batch, done)
        if progress is not None:
            progress(done)
        if indexing is not None:
            indexing(0, 1)
        store.finish()
        if indexing is not None:
            indexing(1, 1)
    finally:
        store.close()
    sparse.save(out)
    config.update(dim=embedder.dim, embedder=embedder.name)
    (out / CONFIG_FILE).write_text(json.dumps(config, indent=2), encoding="utf-8")
    return {**qdrant_params(settings, embedder.name), "dim": embedder.dim, "points": done}


def _upsert(
    store: CollectionStore, sparse: SparseBM25, embedder: Any, batch: list, start: int
) -> int:
    vectors = embedder.embed_passages([p.contents for p in batch])
    points = [
        Point(
            start + i,
            vectors[i].tolist(),
            sparse.document(p.contents),
            {
                "passage_id": p.passage_id,
                "doc_id": p.doc_id,
                "index": p.index,
                "title": p.title,
                "text": p.text,
                "section": p.section,
            },
        )
        for i, p in enumerate(batch)
    ]
    store.upsert(points)
    return start + len(batch)


class QdrantEngine:
    """An opened engine index: its store, the BM25 encoder and the query embedder."""

    def __init__(self, directory: Path, settings: Settings, embedder: Any) -> None:
        self.directory, self.settings, self.embedder = directory, settings, embedder
        config = json.loads((directory / CONFIG_FILE).read_text(encoding="utf-8"))
        self._key, self.store = _SHARED.acquire(settings, config, directory)
        self._open = True
        self.sparse = SparseBM25.load(directory)
        opts = settings.retrieve
        if opts.fusion != "rrf" or tuple(opts.weights) != (1.0, 1.0):
            raise ScieraError(
                "the qdrant engine fuses hybrid results with plain RRF (server side); "
                "set retrieve.fusion to rrf and retrieve.weights to [1, 1]"
            )

    def close(self) -> None:
        if self._open:
            self._open = False
            _SHARED.release(self._key)

    def requests(self, kind: str, queries: Sequence[str], k: int) -> list[Search | None]:
        """One search per query (None for a BM25 query with no known token)."""
        depth = max(self.settings.retrieve.passage_depth, k)
        # Qdrant ranks from 0: k + 1 gives the embedded path's 1 / (rrf_k + rank)
        rrf_k = self.settings.retrieve.rrf_k + 1
        ef = self.settings.index.qdrant_hnsw_ef
        dense = self.embedder.embed_queries(list(queries)) if kind != "bm25" else None
        out: list[Search | None] = []
        for i, q in enumerate(queries):
            ids, values = self.sparse.query(q) if kind != "dense" else ([], [])
            sparse = (ids, values) if ids else None
            if kind == "bm25" and sparse is None:
                out.append(None)
                continue
            vector = dense[i].tolist() if dense is not None else None
            out.append(Search(kind, k, vector, sparse, depth, rrf_k, ef))
        return out

    def search(self, kind: str, queries: Sequence[str], k: int) -> list[Ranking]:
        requests = self.requests(kind, queries, k)
        answers = iter(self.store.search([r for r in requests if r is not None]))
        out = []
        for query, req in zip(queries, requests, strict=True):
            hits = next(answers) if req is not None else []
            scored = [(_passage(payload), score) for payload, score in hits]
            out.append(Ranking.from_scores(query, scored, kind))
        return out


def _passage(payload: dict[str, Any]) -> Passage:
    return Passage(
        payload["passage_id"],
        payload["doc_id"],
        int(payload["index"]),
        payload["title"],
        payload["text"],
        payload.get("section", ""),  # collections built before sections: none
    )


class QdrantRetriever:
    """``bm25``, ``dense`` or ``hybrid`` search of a :class:`QdrantEngine`."""

    def __init__(self, engine: QdrantEngine, kind: str) -> None:
        if kind not in KINDS:
            raise ValueError(f"unknown qdrant retriever {kind!r}; choose one of {KINDS}")
        self.engine, self.name = engine, kind

    def search_many(self, queries: Sequence[str], k: int) -> list[Ranking]:
        return self.engine.search(self.name, list(queries), k)

    def search(self, query: str, k: int) -> Ranking:
        return self.search_many([query], k)[0]

    def close(self) -> None:
        self.engine.close()
