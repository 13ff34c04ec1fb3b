"""The qdrant engine's collection through ``qdrant-client``: a Qdrant server
(``vectors.qdrant_url``; shards and replication from ``index.qdrant_shards`` /
``index.qdrant_replication``) or the client's local mode in a folder (Python, every query
scans the points)."""

from __future__ import annotations

from collections.abc import Sequence
from pathlib import Path
from typing import Any

from sciera.errors import require
from sciera.retrieve.qdrant_store import DENSE, SPARSE, Hit, Point, Search
from sciera.settings import Settings

UPSERT_BATCH = 256


class ClientStore:
    def __init__(self, settings: Settings, collection: str, local: Path | None) -> None:
        qdrant = require("qdrant_client", "qdrant")
        self.models, self.collection, self.settings = qdrant.models, collection, settings
        if local is None:
            self.client = qdrant.QdrantClient(
                url=settings.vectors.qdrant_url, api_key=settings.vectors.qdrant_api_key
            )
        else:
            self.client = qdrant.QdrantClient(path=str(local))

    def create(self, dim: int, hnsw_m: int) -> None:
        m, client = self.models, self.client
        if client.collection_exists(self.collection):
            client.delete_collection(self.collection)
        client.create_collection(
            self.collection,
            vectors_config={DENSE: m.VectorParams(size=dim, distance=m.Distance.COSINE)},
            sparse_vectors_config={SPARSE: m.SparseVectorParams(modifier=m.Modifier.IDF)},
            hnsw_config=m.HnswConfigDiff(m=hnsw_m),
            shard_number=self.settings.index.qdrant_shards,
            replication_factor=self.settings.index.qdrant_replication,
        )

    def upsert(self, points: Sequence[Point]) -> None:
        m = self.models
        for lo in range(0, len(points), UPSERT_BATCH):
            batch = [
                m.PointStruct(
                    id=p.id,
                    vector={
                        DENSE: p.dense,
                        SPARSE: m.SparseVector(indices=p.sparse[0], values=p.sparse[1]),
                    },
                    payload=p.payload,
                )
                for p in points[lo : lo + UPSERT_BATCH]
            ]
            self.client.upsert(self.collection, points=batch, wait=True)

    def finish(self) -> None:
        """Nothing to do: a server indexes in the background, local mode never does."""

    def _sparse(self, sparse: Any) -> Any:
        return self.models.SparseVector(indices=sparse[0], values=sparse[1])

    def _request(self, s: Search) -> Any:
        m = self.models
        ef = None if s.hnsw_ef is None else m.SearchParams(hnsw_ef=s.hnsw_ef)
        if s.kind == "bm25":
            return m.QueryRequest(query=self._sparse(s.sparse), using=SPARSE, limit=s.k)
        if s.kind == "dense":
            return m.QueryRequest(query=s.dense, using=DENSE, limit=s.k, params=ef)
        prefetch = [m.Prefetch(query=s.dense, using=DENSE, limit=s.depth, params=ef)]
        if s.sparse is not None:
            prefetch.append(m.Prefetch(query=self._sparse(s.sparse), using=SPARSE, limit=s.depth))
        rrf = m.RrfQuery(rrf=m.Rrf(k=s.rrf_k))
        return m.QueryRequest(prefetch=prefetch, query=rrf, limit=s.k)

    def search(self, searches: Sequence[Search]) -> list[list[Hit]]:
        if not searches:
            return []
        requests = [self._request(s).model_copy(update={"with_payload": True}) for s in searches]
        answers = self.client.query_batch_points(self.collection, requests=requests)
        return [[(p.payload, float(p.score)) for p in a.points] for a in answers]

    def close(self) -> None:
        self.client.close()
