"""Evidence filtering: keep passages with score >= tau, best first, at most top_k."""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass


@dataclass(frozen=True, slots=True)
class FilterDecision:
    index: int  # position in the input candidate list
    score: float
    kept: bool
    reason: str  # "" when kept


def filter_evidence(
    scores: Sequence[float],
    *,
    tau: float,
    top_k: int | None,
    use_filter: bool = True,
    failed: Sequence[bool] | None = None,
    blocked: Sequence[str] | None = None,
) -> list[FilterDecision]:
    """Decisions in order of score (descending; ties keep input order).

    With ``use_filter`` off (ablation v2) the threshold is ignored and only ``top_k``
    applies. ``top_k=None`` keeps every passage that passes the threshold. A passage
    whose judgment could not be parsed (``failed[i]``) is never kept, whatever tau is.
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
        elif use_filter and s < tau:
            out.append(FilterDecision(i, s, False, f"score {s:.3f} < tau {tau:.2f}"))
        elif top_k is not None and kept >= top_k:
            out.append(FilterDecision(i, s, False, f"beyond top_k={top_k}"))
        else:
            kept += 1
            out.append(FilterDecision(i, s, True, ""))
    return out
