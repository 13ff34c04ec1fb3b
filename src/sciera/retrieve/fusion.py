"""Rank fusion of several rankings of the same query: reciprocal rank fusion and
weighted min-max score fusion. Pure functions over :class:`Ranking`.

Each fused item's provenance maps every component that ranked it to
``{"rank": r, "score": s}`` (its rank and raw score in that component).
"""

from __future__ import annotations

from collections.abc import Callable, Mapping
from typing import Any

from sciera.types import Passage, Ranking

Fused = list[tuple[Passage, float, dict[str, Any]]]


def _provenance(rankings: Mapping[str, Ranking]) -> tuple[dict[str, Passage], dict[str, dict]]:
    passages: dict[str, Passage] = {}
    prov: dict[str, dict[str, Any]] = {}
    for name, ranking in rankings.items():
        for item in ranking:
            passages.setdefault(item.passage_id, item.passage)
            prov.setdefault(item.passage_id, {})[name] = {"rank": item.rank, "score": item.score}
    return passages, prov


def _weight(weights: Mapping[str, float] | None, name: str) -> float:
    return 1.0 if weights is None else float(weights.get(name, 1.0))


def rrf(
    rankings: Mapping[str, Ranking],
    weights: Mapping[str, float] | None = None,
    k: int = 60,
) -> Fused:
    """Reciprocal rank fusion: score = sum over components of w / (k + rank)."""
    passages, prov = _provenance(rankings)
    fused: Fused = []
    for pid, parts in prov.items():
        score = sum(_weight(weights, name) / (k + part["rank"]) for name, part in parts.items())
        fused.append((passages[pid], score, parts))
    return fused


def min_max(scores: list[float]) -> list[float]:
    """Scale to [0, 1]; a list whose scores are all equal maps to all 1.0."""
    if not scores:
        return []
    lo, hi = min(scores), max(scores)
    if hi == lo:
        return [1.0] * len(scores)
    return [(s - lo) / (hi - lo) for s in scores]


def weighted(
    rankings: Mapping[str, Ranking],
    weights: Mapping[str, float] | None = None,
    k: int = 60,
) -> Fused:
    """Min-max normalize each component's scores over its list, then the weighted sum.

    A passage missing from a component's list gets 0 from it. ``k`` is unused
    (kept so every fusion function has the same signature).
    """
    passages, prov = _provenance(rankings)
    totals: dict[str, float] = dict.fromkeys(prov, 0.0)
    for name, ranking in rankings.items():
        normalized = min_max([item.score for item in ranking])
        for item, norm in zip(ranking, normalized, strict=True):
            totals[item.passage_id] += _weight(weights, name) * norm
    return [(passages[pid], totals[pid], prov[pid]) for pid in prov]


FUSIONS: dict[str, Callable[..., Fused]] = {"rrf": rrf, "weighted": weighted}


def fuse(
    rankings: Mapping[str, Ranking],
    method: str = "rrf",
    weights: Mapping[str, float] | None = None,
    k: int = 60,
    stage: str = "hybrid",
) -> Ranking:
    """Fuse rankings of one query with ``FUSIONS[method]`` into one ranking."""
    try:
        function = FUSIONS[method]
    except KeyError:
        raise ValueError(f"unknown fusion {method!r}; choose one of {sorted(FUSIONS)}") from None
    queries = {r.query for r in rankings.values()}
    if len(queries) > 1:
        raise ValueError(f"cannot fuse rankings of different queries: {sorted(queries)}")
    query = queries.pop() if queries else ""
    return Ranking.from_scores(query, function(rankings, weights, k), stage)
