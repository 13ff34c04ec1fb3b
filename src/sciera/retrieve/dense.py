"""Dense retrieval: embed the query, search a vector index, fetch the passages."""

from __future__ import annotations

from collections.abc import Sequence

from sciera.embed.base import Embedder
from sciera.retrieve.base import Hits, PassageSource, rankings_from_hits
from sciera.types import Ranking
from sciera.vectors.base import VectorIndex


class DenseRetriever:
    """:class:`Embedder` + :class:`VectorIndex`; scores are cosine similarities."""

    name = "dense"

    def __init__(self, embedder: Embedder, index: VectorIndex, source: PassageSource) -> None:
        if embedder.dim != index.dim:
            raise ValueError(f"embedder dim {embedder.dim} != index dim {index.dim}")
        self.embedder = embedder
        self.index = index
        self.source = source

    def search_hits(self, queries: Sequence[str], k: int) -> list[Hits]:
        """Top-``k`` ``(passage_id, score)`` per query, without fetching passages."""
        if not queries:
            return []
        return self.index.search(self.embedder.embed_queries(list(queries)), k)

    def search_many(self, queries: Sequence[str], k: int) -> list[Ranking]:
        queries = list(queries)
        return rankings_from_hits(queries, self.search_hits(queries, k), self.source, self.name)

    def search(self, query: str, k: int) -> Ranking:
        return self.search_many([query], k)[0]
