"""The whole index in one Qdrant collection (``index.engine: qdrant``): dense vectors and
BM25 sparse vectors side by side, passage texts in the payloads, hybrid search fused by
Qdrant itself (two prefetches, reciprocal rank fusion).

Layout: ``DIR/index/qdrant-<embedder>/`` holds ``qdrant_engine.json`` (the collection, the
server URL or the local folder, dimension, embedder) and ``sparse_bm25.json`` (the BM25
vocabulary and mean length, :mod:`sciera.retrieve.sparse_bm25`); with no server URL the
collection lives in ``qdrant/`` beside them (Qdrant's local mode, the same client API).

Each point: integer id (the passage's position in the store), vector ``dense`` (cosine) and
sparse vector ``bm25`` (``IDF`` modifier, so Qdrant computes idf from its own document
frequencies), payload ``passage_id``, ``doc_id``, ``index``, ``title``, ``text``: a result
needs no other store. Shards and replication come from ``index.qdrant_shards`` /
``index.qdrant_replication`` (a server honours them; local mode has one shard). In a
sharded collection Qdrant computes idf per shard, so BM25 scores there differ slightly
from the single-shard (and bm25s) scores; rankings agree where shards are large.

Retrievers ``bm25``, ``dense`` and ``hybrid`` search the collection; hybrid is plain RRF
over each side's top ``retrieve.depth``, with the embedded path's 1 / (``retrieve.rrf_k`` +
rank) scores (weighted fusion is not offered: Qdrant fuses server side).
"""

from __future__ import annotations

import json
from collections.abc import Callable, Sequence
from pathlib import Path
from typing import Any

from sciera.errors import ScieraError, require
from sciera.retrieve.sparse_bm25 import SparseBM25
from sciera.settings import Settings
from sciera.types import Passage, Ranking

CONFIG_FILE = "qdrant_engine.json"
LOCAL_DIR = "qdrant"
DENSE, SPARSE = "dense", "bm25"
UPSERT_BATCH = 256
KINDS = ("bm25", "dense", "hybrid")


def qdrant_key(embedder_name: str) -> str:
    return f"qdrant-{embedder_name}"


def qdrant_params(settings: Settings, embedder_name: str) -> dict[str, Any]:
    """What an index must match to be opened with ``settings`` (see the manifest)."""
    from sciera.retrieve.build import bm25_params, dense_params

    dense = dense_params(settings, embedder_name)
    dense.pop("vectors", None)
    return {
        "engine": "qdrant",
        **{f"bm25_{k}": v for k, v in bm25_params(settings).items()},
        **dense,
        "qdrant_url": settings.vectors.qdrant_url,
        "shards": settings.index.qdrant_shards,
        "replication": settings.index.qdrant_replication,
    }


def _client(settings: Settings, local: Path | None) -> Any:
    qdrant = require("qdrant_client", "qdrant")
    if settings.vectors.qdrant_url:
        return qdrant.QdrantClient(
            url=settings.vectors.qdrant_url, api_key=settings.vectors.qdrant_api_key
        )
    assert local is not None
    return qdrant.QdrantClient(path=str(local))


def build_qdrant(
    passages: Callable[[], Any],
    out: Path,
    settings: Settings,
    embedder: Any,
    total: int,
    collection: str,
    progress: Callable[[int], None] | None = None,
    chunk: int = 1024,
) -> dict[str, Any]:
    """Write the collection from ``passages()`` (called twice: the BM25 vocabulary pass,
    then the points pass) and the config into ``out``; returns the manifest parameters."""
    models = require("qdrant_client", "qdrant").models
    sparse = SparseBM25.fit((p.contents for p in passages()), settings.bm25)
    out.mkdir(parents=True, exist_ok=True)
    local = None if settings.vectors.qdrant_url else out / LOCAL_DIR
    client = _client(settings, local)
    try:
        if client.collection_exists(collection):
            client.delete_collection(collection)
        client.create_collection(
            collection,
            vectors_config={
                DENSE: models.VectorParams(size=embedder.dim, distance=models.Distance.COSINE)
            },
            sparse_vectors_config={SPARSE: models.SparseVectorParams(modifier=models.Modifier.IDF)},
            shard_number=settings.index.qdrant_shards,
            replication_factor=settings.index.qdrant_replication,
        )
        done, batch = 0, []
        for p in passages():
            batch.append(p)
            if len(batch) == chunk:
                done = _upsert(client, collection, models, sparse, embedder, batch, done)
                batch = []
                if progress is not None:
                    progress(done)
        if batch:
            done = _upsert(client, collection, models, sparse, embedder, batch, done)
        if progress is not None:
            progress(done)
    finally:
        client.close()
    sparse.save(out)
    config = {"collection": collection, "dim": embedder.dim, "embedder": embedder.name}
    config["url" if local is None else "path"] = settings.vectors.qdrant_url or LOCAL_DIR
    (out / CONFIG_FILE).write_text(json.dumps(config, indent=2), encoding="utf-8")
    return {**qdrant_params(settings, embedder.name), "dim": embedder.dim, "points": done}


def _upsert(
    client: Any,
    collection: str,
    models: Any,
    sparse: SparseBM25,
    embedder: Any,
    batch: list,
    start: int,
) -> int:
    vectors = embedder.embed_passages([p.contents for p in batch])
    for lo in range(0, len(batch), UPSERT_BATCH):
        points = []
        for i, p in enumerate(batch[lo : lo + UPSERT_BATCH], start=lo):
            ids, weights = sparse.document(p.contents)
            points.append(
                models.PointStruct(
                    id=start + i,
                    vector={
                        DENSE: vectors[i].tolist(),
                        SPARSE: models.SparseVector(indices=ids, values=weights),
                    },
                    payload={
                        "passage_id": p.passage_id,
                        "doc_id": p.doc_id,
                        "index": p.index,
                        "title": p.title,
                        "text": p.text,
                    },
                )
            )
        client.upsert(collection, points=points, wait=True)
    return start + len(batch)


class QdrantEngine:
    """An opened engine index: the client, the BM25 encoder and the query embedder."""

    def __init__(self, directory: Path, settings: Settings, embedder: Any) -> None:
        self.directory, self.settings, self.embedder = directory, settings, embedder
        config = json.loads((directory / CONFIG_FILE).read_text(encoding="utf-8"))
        self.collection = config["collection"]
        local = directory / config["path"] if "path" in config else None
        self.client = _client(settings, local)
        self.sparse = SparseBM25.load(directory)
        self.models = require("qdrant_client", "qdrant").models
        opts = settings.retrieve
        if opts.fusion != "rrf" or tuple(opts.weights) != (1.0, 1.0):
            raise ScieraError(
                "the qdrant engine fuses hybrid results with plain RRF (server side); "
                "set retrieve.fusion to rrf and retrieve.weights to [1, 1]"
            )

    def close(self) -> None:
        self.client.close()

    def _sparse(self, query: str) -> Any:
        ids, values = self.sparse.query(query)
        return self.models.SparseVector(indices=ids, values=values) if ids else None

    def requests(self, kind: str, queries: Sequence[str], k: int) -> list[Any]:
        """One query request per query (None for a BM25 query with no known token)."""
        m, depth = self.models, max(self.settings.retrieve.depth, k)
        dense = self.embedder.embed_queries(list(queries)) if kind != "bm25" else None
        out = []
        for i, q in enumerate(queries):
            sparse = self._sparse(q) if kind != "dense" else None
            if kind == "bm25":
                req = m.QueryRequest(query=sparse, using=SPARSE, limit=k) if sparse else None
            elif kind == "dense":
                req = m.QueryRequest(query=dense[i].tolist(), using=DENSE, limit=k)
            else:
                prefetch = [m.Prefetch(query=dense[i].tolist(), using=DENSE, limit=depth)]
                if sparse is not None:
                    prefetch.append(m.Prefetch(query=sparse, using=SPARSE, limit=depth))
                # Qdrant ranks from 0: k + 1 gives the embedded path's 1 / (rrf_k + rank)
                rrf = m.RrfQuery(rrf=m.Rrf(k=self.settings.retrieve.rrf_k + 1))
                req = m.QueryRequest(prefetch=prefetch, query=rrf, limit=k)
            out.append(req)
        return out

    def search(self, kind: str, queries: Sequence[str], k: int) -> list[Ranking]:
        requests = self.requests(kind, queries, k)
        asked = [r for r in requests if r is not None]
        answers = iter(
            self.client.query_batch_points(
                self.collection,
                requests=[r.model_copy(update={"with_payload": True}) for r in asked],
            )
            if asked
            else []
        )
        out = []
        for query, req in zip(queries, requests, strict=True):
            points = next(answers).points if req is not None else []
            scored = [(_passage(p.payload), float(p.score)) for p in points]
            out.append(Ranking.from_scores(query, scored, kind))
        return out


def _passage(payload: dict[str, Any]) -> Passage:
    return Passage(
        payload["passage_id"],
        payload["doc_id"],
        int(payload["index"]),
        payload["title"],
        payload["text"],
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
