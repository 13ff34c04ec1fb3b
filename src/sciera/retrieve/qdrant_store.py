"""What the qdrant engine asks of a Qdrant collection, whoever holds it.

:class:`~sciera.retrieve.qdrant_engine.QdrantEngine` builds points and search requests in
these plain terms; a store turns them into its own API's calls:

- :mod:`sciera.retrieve.qdrant_client_store`: ``qdrant-client`` against a server
  (``vectors.qdrant_url``) or in its local mode (Python, scans every point);
- :mod:`sciera.retrieve.qdrant_edge_store`: Qdrant Edge (``qdrant-edge-py``), Qdrant's own
  Rust shard in process: HNSW and a sparse inverted index, no server.

Both hold one collection of the same layout: vector ``dense`` (cosine), sparse vector
``bm25`` (``IDF`` modifier), payload ``passage_id``, ``doc_id``, ``index``, ``title``,
``text``; hybrid is RRF over two prefetches, ranked from 0 by Qdrant, so ``k`` is
sciera's ``retrieve.rrf_k`` + 1.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any, Protocol

DENSE, SPARSE = "dense", "bm25"
HNSW_EF_CONSTRUCT = 100  # Qdrant's default
HNSW_FULL_SCAN_KB = 10_000  # Qdrant's default: below it a segment is searched exactly

Sparse = tuple[list[int], list[float]]
"""(token ids, weights), ids ascending."""


@dataclass(frozen=True, slots=True)
class Point:
    id: int
    dense: list[float]
    sparse: Sparse
    payload: dict[str, Any]


@dataclass(frozen=True, slots=True)
class Search:
    """One query: ``kind`` bm25 (``sparse`` only), dense (``dense`` only) or hybrid (both
    prefetched to ``depth``, fused by RRF with ``rrf_k``); ``k`` results; ``hnsw_ef`` the
    dense search's beam (None: Qdrant's default)."""

    kind: str
    k: int
    dense: list[float] | None = None
    sparse: Sparse | None = None
    depth: int = 0
    rrf_k: int = 61
    hnsw_ef: int | None = None


Hit = tuple[dict[str, Any], float]
"""(payload, score)."""


class CollectionStore(Protocol):
    def create(self, dim: int, hnsw_m: int) -> None:
        """A new, empty collection (an old one of the same name is replaced); ``hnsw_m``
        links per node of the dense HNSW graph (0: no graph, exact dense search)."""

    def upsert(self, points: Sequence[Point]) -> None: ...

    def finish(self) -> None:
        """After the last upsert: persist, and build what the store indexes."""

    def search(self, searches: Sequence[Search]) -> list[list[Hit]]: ...

    def close(self) -> None: ...
