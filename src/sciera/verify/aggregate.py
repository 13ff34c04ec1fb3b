"""From per-abstract verdicts to the claim's overall verdict: a pure function.

A verdict is *strong* when it is SUPPORT or CONTRADICT with calibrated confidence at or
above ``strong``. Strong verdicts on both sides make the claim CONFLICTING (naming the
abstracts on each side); strong verdicts on one side give that side, with the confidence
of its strongest abstract; none give NOT ENOUGH INFO, with confidence the smallest
P(NOT ENOUGH INFO) among the abstracts (how sure we are that none of them decides).
The default ``strong`` is chosen on the dev split and stated in the model card.
"""

from __future__ import annotations

from collections.abc import Sequence

from sciera.types import (
    CONFLICTING,
    CONTRADICT,
    NOT_ENOUGH_INFO,
    SUPPORT,
    VERDICT_LABELS,
    AbstractVerdict,
    Verification,
)

DEFAULT_STRONG = 0.5
_NEI = VERDICT_LABELS.index(NOT_ENOUGH_INFO)


def aggregate(
    claim: str, verdicts: Sequence[AbstractVerdict], strong: float = DEFAULT_STRONG
) -> Verification:
    """The overall verdict on ``claim`` from its abstracts' verdicts (kept in input order)."""
    if not 0.0 <= strong <= 1.0:
        raise ValueError(f"strong must be in [0, 1], got {strong}")

    def side(label: str) -> list[AbstractVerdict]:
        picked = [v for v in verdicts if v.label == label and v.confidence >= strong]
        return sorted(picked, key=lambda v: -v.confidence)

    support, contra = side(SUPPORT), side(CONTRADICT)
    supporting = tuple(v.doc_id for v in support)
    contradicting = tuple(v.doc_id for v in contra)
    if support and contra:
        label, confidence = CONFLICTING, min(support[0].confidence, contra[0].confidence)
    elif support:
        label, confidence = SUPPORT, support[0].confidence
    elif contra:
        label, confidence = CONTRADICT, contra[0].confidence
    else:
        label = NOT_ENOUGH_INFO
        confidence = min((v.probs[_NEI] for v in verdicts), default=1.0)
    return Verification(
        claim,
        tuple(verdicts),
        label,
        float(confidence),
        conflicting=label == CONFLICTING,
        supporting=supporting,
        contradicting=contradicting,
    )
