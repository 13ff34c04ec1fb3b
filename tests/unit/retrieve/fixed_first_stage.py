"""A stand-in first stage the section and sub-corpus filter tests share."""

from __future__ import annotations

from sciera.types import Passage, Ranking


class Fixed:
    """A stand-in first stage returning the first ``k`` of fixed passages, counting calls."""

    name = "fixed"

    def __init__(self, passages: list[Passage]) -> None:
        self.passages, self.depths = passages, []

    def search_many(self, queries, k):
        self.depths.append(k)
        scored = [(p, 1.0 / (i + 1)) for i, p in enumerate(self.passages[:k])]
        return [Ranking.from_scores(q, scored, "fixed") for q in queries]

    def search(self, query, k):
        return self.search_many([query], k)[0]
