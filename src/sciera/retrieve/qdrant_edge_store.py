"""The qdrant engine's collection in Qdrant Edge (``pip install qdrant-edge-py``): Qdrant's
Rust shard in process, no server. After the last upsert ``optimize()`` merges segments and
builds the HNSW graph and the sparse inverted index, so a query touches an index instead
of every point (Qdrant's Python local mode scans). One shard: ``index.qdrant_shards`` and
replication need a server."""

from __future__ import annotations

from collections.abc import Sequence
from pathlib import Path
from typing import Any

from sciera.errors import require
from sciera.retrieve.qdrant_store import (
    DENSE,
    HNSW_EF_CONSTRUCT,
    HNSW_FULL_SCAN_KB,
    SPARSE,
    Hit,
    Point,
    Search,
)


class EdgeStore:
    def __init__(self, path: Path) -> None:
        self.path = path
        self.q = require("qdrant_edge", "qdrant")
        self.shard: Any = None
        if (path / "edge_config.json").exists():
            self.shard = self.q.EdgeShard.load(str(path))

    def create(self, dim: int, hnsw_m: int) -> None:
        q = self.q
        if self.shard is not None:
            raise ValueError(f"a Qdrant Edge shard already exists in {self.path}")
        config = q.EdgeConfig(
            vectors={DENSE: q.EdgeVectorParams(size=dim, distance=q.Distance.Cosine)},
            sparse_vectors={SPARSE: q.EdgeSparseVectorParams(modifier=q.Modifier.Idf)},
            hnsw_config=q.HnswIndexConfig(
                m=hnsw_m, ef_construct=HNSW_EF_CONSTRUCT, full_scan_threshold=HNSW_FULL_SCAN_KB
            ),
        )
        self.path.mkdir(parents=True, exist_ok=True)
        self.shard = q.EdgeShard.create(str(self.path), config)

    def upsert(self, points: Sequence[Point]) -> None:
        q = self.q
        edge_points = [
            q.Point(
                p.id,
                {DENSE: p.dense, SPARSE: q.SparseVector(indices=p.sparse[0], values=p.sparse[1])},
                p.payload,
            )
            for p in points
        ]
        self.shard.update(q.UpdateOperation.upsert_points(edge_points))

    def finish(self) -> None:
        self.shard.flush()
        self.shard.optimize()
        self.shard.flush()

    def _nearest(self, vector: Any, using: str) -> Any:
        if using == SPARSE:
            vector = self.q.SparseVector(indices=vector[0], values=vector[1])
        return self.q.Query.Nearest(vector, using=using)

    def _request(self, s: Search) -> Any:
        q = self.q
        ef = None if s.hnsw_ef is None else q.SearchParams(hnsw_ef=s.hnsw_ef)
        if s.kind == "bm25":
            query = self._nearest(s.sparse, SPARSE)
            return q.QueryRequest(query=query, limit=s.k, with_payload=True)
        if s.kind == "dense":
            query = self._nearest(s.dense, DENSE)
            return q.QueryRequest(query=query, limit=s.k, params=ef, with_payload=True)
        prefetch = [q.Prefetch(query=self._nearest(s.dense, DENSE), limit=s.depth, params=ef)]
        if s.sparse is not None:
            prefetch.append(q.Prefetch(query=self._nearest(s.sparse, SPARSE), limit=s.depth))
        return q.QueryRequest(
            prefetches=prefetch, query=q.Fusion.Rrf(s.rrf_k), limit=s.k, with_payload=True
        )

    def search(self, searches: Sequence[Search]) -> list[list[Hit]]:
        if not searches:
            return []
        batch = self.q.QueryBatchRequest([self._request(s) for s in searches])
        answers = self.shard.query_batch(batch)
        return [[(dict(p.payload), float(p.score)) for p in points] for points in answers]

    def close(self) -> None:
        if self.shard is not None:
            self.shard.close()
            self.shard = None
