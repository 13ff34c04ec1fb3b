"""When to refuse, and the refusal Answer ("the evidence is insufficient")."""

from __future__ import annotations

from collections.abc import Sequence

from sciera.types import Answer, Evidence

REFUSAL_TEXT = "The evidence is insufficient to answer this question."


def refusal_reason(
    evidence: Sequence[Evidence],
    sufficient: bool | None,
    *,
    on_empty: bool = True,
    on_insufficient: bool = True,
) -> str:
    """Why to refuse, or "" to answer."""
    if on_empty and not evidence:
        return "no evidence survived the filter"
    if on_insufficient and sufficient is False:
        return "the evidence extractor judged the evidence insufficient"
    return ""


def refusal(question: str, question_type: str, evidence: Sequence[Evidence], reason: str) -> Answer:
    return Answer(
        question=question,
        text=REFUSAL_TEXT,
        question_type=question_type,
        evidence=tuple(evidence),
        insufficient=True,
        trace={"refused": reason, "exact": ()},
    )
