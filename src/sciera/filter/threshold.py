"""Keep passages with score >= tau, best first, at most top_k (paper Algorithm 1, step 3).

:func:`filter_evidence` is the rule over plain scores; :class:`ThresholdFilter` applies it
to a reranked :class:`~sciera.types.Ranking` and is the pipeline's filter stage. The
threshold applies only to a ranking whose scores are calibrated P(relevant)
(``Ranking.calibrated``): a raw score (BM25, a logit) has no fixed meaning, so such a
ranking keeps its top_k. A reranker marks a passage it judged unusable with a reason
under ``provenance[stage]["exclude"]`` (an unparseable reply, instructions aimed at the
grader, a passage not graded because no grade could keep it); such a passage is never
kept, whatever its score.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import Any

from sciera.types import Ranking, ScoredPassage

EXCLUDE = "exclude"
"""The provenance key (under the reranker's stage) that holds why a passage is unusable."""


@dataclass(frozen=True, slots=True)
class FilterDecision:
    index: int  # position in the input candidate list
    score: float
    kept: bool
    reason: str  # "" when kept


def filter_evidence(
    scores: Sequence[float],
    *,
    tau: float | None,
    top_k: int | None,
    failed: Sequence[bool] | None = None,
    blocked: Sequence[str] | None = None,
) -> list[FilterDecision]:
    """Decisions in order of score (descending; ties keep input order).

    ``tau=None`` ignores the threshold (ablation v2: only ``top_k`` applies);
    ``top_k=None`` keeps every passage that passes it. A passage whose judgment could not
    be parsed (``failed[i]``) or that was excluded (``blocked[i]``, the reason) is never kept.
    """
    order = sorted(range(len(scores)), key=lambda i: (-scores[i], i))
    out: list[FilterDecision] = []
    kept = 0
    for i in order:
        s = float(scores[i])
        if blocked is not None and blocked[i]:
            out.append(FilterDecision(i, s, False, blocked[i]))
        elif failed is not None and failed[i]:
            out.append(FilterDecision(i, s, False, "unparseable LLM reply: not relevant"))
        elif tau is not None and s < tau:
            out.append(FilterDecision(i, s, False, f"score {s:.3f} < tau {tau:.2f}"))
        elif top_k is not None and kept >= top_k:
            out.append(FilterDecision(i, s, False, f"beyond top_k={top_k}"))
        else:
            kept += 1
            out.append(FilterDecision(i, s, True, ""))
    return out


@dataclass(frozen=True, slots=True)
class ThresholdFilter:
    """The filter stage: ``tau`` over calibrated scores (None: off), at most ``top_k``
    passages (None: no limit). ``ThresholdFilter(None, None)`` keeps everything usable."""

    tau: float | None = 0.8
    top_k: int | None = 5
    name: str = "threshold"

    def __post_init__(self) -> None:
        if self.tau is not None and not 0.0 <= self.tau <= 1.0:
            raise ValueError(f"tau must be in [0, 1], got {self.tau}")
        if self.top_k is not None and self.top_k < 1:
            raise ValueError(f"top_k must be at least 1 (or None for no limit), got {self.top_k}")

    def apply(self, ranking: Ranking) -> tuple[Ranking, dict[str, Any]]:
        """(the kept passages, best first, re-ranked 1..n; the trace: tau as applied, top_k,
        and every input passage's decision in input order)."""
        tau = self.tau if ranking.calibrated else None
        items = ranking.items
        excluded = [_excluded(it, ranking.stage) for it in items]
        decisions = filter_evidence(
            [it.score for it in items], tau=tau, top_k=self.top_k, blocked=excluded
        )
        kept = [items[d.index] for d in decisions if d.kept]
        out = Ranking(
            ranking.query,
            tuple(_reranked(it, n + 1) for n, it in enumerate(kept)),
            ranking.stage,
            ranking.calibrated,
        )
        by_index = {d.index: d for d in decisions}
        trace = {
            "tau": tau,
            "top_k": self.top_k,
            "calibrated": ranking.calibrated,
            "decisions": [
                {"passage_id": it.passage_id, "kept": by_index[i].kept, "why": by_index[i].reason}
                for i, it in enumerate(items)
            ],
        }
        return out, trace


def _excluded(item: ScoredPassage, stage: str) -> str:
    entry = item.provenance.get(stage)
    return str(entry.get(EXCLUDE) or "") if isinstance(entry, Mapping) else ""


def _reranked(item: ScoredPassage, rank: int) -> ScoredPassage:
    if item.rank == rank:
        return item
    return ScoredPassage(item.passage, item.score, rank, item.provenance)
