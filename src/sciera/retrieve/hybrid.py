"""Hybrid retrieval: run several retrievers to ``depth`` and fuse (RRF or weighted)."""

from __future__ import annotations

from collections.abc import Mapping, Sequence

from sciera.retrieve.base import Retriever
from sciera.retrieve.fusion import FUSIONS, fuse
from sciera.types import Ranking


class HybridRetriever:
    """Fuses the top-``depth`` lists of named component retrievers.

    ``fusion="rrf"``: score = sum of w / (rrf_k + rank). ``fusion="weighted"``:
    weighted sum of min-max normalized scores. Weights default to 1 for every
    component. Provenance keeps each component's rank and score.
    """

    name = "hybrid"

    def __init__(
        self,
        retrievers: Mapping[str, Retriever],
        fusion: str = "rrf",
        weights: Mapping[str, float] | None = None,
        rrf_k: int = 60,
        depth: int = 100,
    ) -> None:
        if not retrievers:
            raise ValueError("a hybrid retriever needs at least one component")
        if fusion not in FUSIONS:
            raise ValueError(f"unknown fusion {fusion!r}; choose one of {sorted(FUSIONS)}")
        self.retrievers = dict(retrievers)
        self.fusion = fusion
        self.weights = dict(weights) if weights is not None else None
        self.rrf_k = rrf_k
        self.depth = depth

    def search_many(self, queries: Sequence[str], k: int) -> list[Ranking]:
        queries = list(queries)
        depth = max(self.depth, k)
        per_component = {
            name: retriever.search_many(queries, depth)
            for name, retriever in self.retrievers.items()
        }
        out = []
        for i, _ in enumerate(queries):
            rankings = {name: results[i] for name, results in per_component.items()}
            fused = fuse(rankings, self.fusion, self.weights, self.rrf_k, stage=self.name)
            out.append(fused.top(k))
        return out

    def search(self, query: str, k: int) -> Ranking:
        return self.search_many([query], k)[0]
