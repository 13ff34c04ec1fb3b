"""Max-P: map passage hits to documents, each document scored by its best passage."""

from __future__ import annotations

from collections.abc import Sequence

from sciera.retrieve.base import Retriever
from sciera.types import Ranking, ScoredPassage


def maxp(ranking: Ranking, k: int | None = None) -> Ranking:
    """One item per ``doc_id``: its best-scoring passage (score = that passage's score).

    The item keeps the passage's provenance and adds ``"maxp": {"doc_id",
    "passage_rank", "hits"}`` (the best passage's rank in the passage list and how
    many of the document's passages were in it).
    """
    best: dict[str, ScoredPassage] = {}
    hits: dict[str, int] = {}
    for item in ranking:
        doc = item.passage.doc_id
        hits[doc] = hits.get(doc, 0) + 1
        current = best.get(doc)
        if current is None or item.score > current.score:
            best[doc] = item
    scored = [
        (
            item.passage,
            item.score,
            {
                **item.provenance,
                "maxp": {"doc_id": doc, "passage_rank": item.rank, "hits": hits[doc]},
            },
        )
        for doc, item in best.items()
    ]
    out = Ranking.from_scores(ranking.query, scored, f"{ranking.stage}+maxp")
    return out if k is None else out.top(k)


PASSAGES_PER_DOCUMENT = 10


def passage_depth(depth: int, k: int) -> int:
    """Passages to retrieve so that Max-P usually finds ``k`` distinct documents: at least
    ``depth`` (the settings' retrieval depth), at least ``PASSAGES_PER_DOCUMENT`` per
    document asked for."""
    return max(depth, PASSAGES_PER_DOCUMENT * k)


class MaxPRetriever:
    """Wraps a passage retriever to return the top-``k`` documents (``--unit document``).

    Retrieves ``max(depth, k)`` passages first so that ``k`` distinct documents
    are usually available.
    """

    def __init__(self, inner: Retriever, depth: int = 100) -> None:
        self.inner = inner
        self.depth = depth
        self.name = f"{inner.name}+maxp"

    def search_many(self, queries: Sequence[str], k: int) -> list[Ranking]:
        rankings = self.inner.search_many(queries, max(self.depth, k))
        return [maxp(r, k) for r in rankings]

    def search(self, query: str, k: int) -> Ranking:
        return self.search_many([query], k)[0]
