"""A first stage followed by a reranker, usable wherever a retriever is (``search_many``).

The top ``rerank_depth`` candidates are reranked; the rest of the first-stage list follows
them in its own order, so recall at larger cutoffs is the first stage's. With
``unit="document"`` candidates are documents (each represented by its best passage, Max-P)
as in the rerank benchmarks; with ``unit="passage"`` they are passages.
"""

from __future__ import annotations

from collections.abc import Sequence

from sciera.rerank.base import Reranker
from sciera.retrieve.base import Retriever
from sciera.retrieve.maxp import maxp
from sciera.types import Ranking, ScoredPassage


def rerank_head(ranking: Ranking, reranker: Reranker, depth: int, unit: str) -> Ranking:
    """``ranking`` with its first ``depth`` candidates reranked, the rest below in order."""
    head = maxp(ranking, depth) if unit == "document" else ranking.top(depth)
    reranked = reranker.rerank(ranking.query, head) if len(head) else head
    seen = {it.passage.doc_id if unit == "document" else it.passage_id for it in head}
    items = list(reranked.items)
    low = min((it.score for it in items), default=0.0)
    tail = [
        it
        for it in ranking.items
        if (it.passage.doc_id if unit == "document" else it.passage_id) not in seen
    ]
    items += [
        ScoredPassage(it.passage, low - 1.0 - n, 0, it.provenance) for n, it in enumerate(tail)
    ]
    return Ranking(
        ranking.query,
        tuple(
            ScoredPassage(it.passage, it.score, n + 1, it.provenance) for n, it in enumerate(items)
        ),
        f"{ranking.stage}>{getattr(reranker, 'name', 'rerank')}",
    )


class RerankedRetriever:
    """``first`` then ``reranker`` on its top ``depth`` candidates."""

    def __init__(
        self, first: Retriever, reranker: Reranker, depth: int = 30, unit: str = "document"
    ) -> None:
        self.first, self.reranker, self.depth, self.unit = first, reranker, depth, unit
        self.name = f"{first.name}>{reranker.name}@{depth}"

    def search_many(self, queries: Sequence[str], k: int) -> list[Ranking]:
        return [
            rerank_head(r, self.reranker, self.depth, self.unit)
            for r in self.first.search_many(queries, k)
        ]

    def search(self, query: str, k: int) -> Ranking:
        return self.search_many([query], k)[0]
