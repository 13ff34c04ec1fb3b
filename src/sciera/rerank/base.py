"""The Reranker protocol and the small helpers every backend shares.

A reranker reads a first-stage :class:`~sciera.types.Ranking` and returns a new one:
same passages (DeepEra may return a documented, filtered subset), ranks 1..n, scores
sorted descending, the input left untouched. Each item keeps the provenance it came
with and gains an entry under the reranker's stage name, plus the first-stage score
and rank under the input ranking's stage name (``"input"`` when unnamed).
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any, Protocol, runtime_checkable

from sciera.types import Passage, Ranking, ScoredPassage


@runtime_checkable
class Reranker(Protocol):
    """Reorders candidate passages for a query."""

    name: str

    def rerank(self, query: str, ranking: Ranking) -> Ranking:
        """Return a new ranking of ``ranking``'s passages, best first."""
        ...

    def rerank_traced(self, query: str, ranking: Ranking) -> tuple[Ranking, dict[str, Any]]:
        """:meth:`rerank` and the reranker's own JSON-ready trace (``{}`` when it keeps none)."""
        ...

    def score(self, query: str, passage: Passage) -> float:
        """Relevance of one passage to the query (higher is more relevant)."""
        ...


class RerankerBase:
    """What every reranker shares: ``rerank_traced`` is ``rerank`` with an empty trace,
    unless the reranker records one of its own (DeepEra)."""

    name: str

    def rerank(self, query: str, ranking: Ranking) -> Ranking:
        raise NotImplementedError

    def rerank_traced(self, query: str, ranking: Ranking) -> tuple[Ranking, dict[str, Any]]:
        return self.rerank(query, ranking), {}


@runtime_checkable
class Scorer(Protocol):
    """What scores all of a query's candidates in one pass with calibrated P(relevant):
    DeepEra's trained scorer (a cross-encoder trained by ``sciera train cross-encoder``)."""

    name: str
    model_name: str
    score_mode: str
    calibrator: Any  # a fitted Calibrator: the scores are probabilities

    def assess(self, query: str, ranking: Ranking) -> tuple[list[float], list[float]]:
        """(P(relevant), raw model outputs) of ``ranking``'s passages in input order."""
        ...


def first_stage_key(ranking: Ranking) -> str:
    return ranking.stage or "input"


def rescored(
    ranking: Ranking,
    scores: Sequence[float],
    stage: str,
    details: Sequence[Mapping[str, Any]] | None = None,
    query: str | None = None,
    *,
    calibrated: bool = False,
) -> Ranking:
    """A new ranking of ``ranking``'s items with new scores, sorted descending.

    Ties keep the input order (a stable sort), so a reranker that cannot tell two
    passages apart does not undo the first stage. ``details[i]`` is stored as
    ``provenance[stage]`` of item i.
    """
    if len(scores) != len(ranking.items):
        raise ValueError(f"{len(scores)} scores for {len(ranking.items)} passages")
    prev = first_stage_key(ranking)
    rows: list[tuple[float, int, ScoredPassage]] = []
    for i, (item, s) in enumerate(zip(ranking.items, scores, strict=True)):
        prov = dict(item.provenance)
        prov.setdefault(prev, {"score": item.score, "rank": item.rank})
        prov[stage] = dict(details[i]) if details is not None else {"score": float(s)}
        rows.append((float(s), i, ScoredPassage(item.passage, float(s), 0, prov)))
    rows.sort(key=lambda r: (-r[0], r[1]))
    items = tuple(
        ScoredPassage(sp.passage, sp.score, rank=n + 1, provenance=sp.provenance)
        for n, (_, _, sp) in enumerate(rows)
    )
    return Ranking(ranking.query if query is None else query, items, stage, calibrated)


def truncate_words(text: str, max_words: int) -> str:
    """The first ``max_words`` whitespace-separated words of ``text`` (the passage budget)."""
    words = text.split()
    if len(words) <= max_words:
        return text.strip()
    return " ".join(words[:max_words]) + " ..."
