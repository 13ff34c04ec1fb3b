"""From per-abstract verdicts to the claim's overall verdict: a pure function.

A verdict is *strong* when it is SUPPORT or CONTRADICT with calibrated confidence at or
above ``strong``. Strong verdicts on both sides make the claim CONFLICTING (naming the
abstracts on each side); strong verdicts on one side give that side, with the confidence
of its strongest abstract; none give NOT ENOUGH INFO, with confidence the smallest among
the abstracts of how sure each is that it does not decide (:func:`undecided`: an abstract
decided NOT ENOUGH INFO its own confidence, which the relevance gate sets to one minus its
evidence score; any other its P(NOT ENOUGH INFO)).
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
        confidence = min((undecided(v) for v in verdicts), default=1.0)
    return Verification(
        claim,
        tuple(verdicts),
        label,
        float(confidence),
        conflicting=label == CONFLICTING,
        supporting=supporting,
        contradicting=contradicting,
    )


def undecided(v: AbstractVerdict) -> float:
    """How sure ``v`` is that its abstract does not decide the claim: its confidence when it
    is NOT ENOUGH INFO (an abstract the relevance gate kept out was never read by the
    verdict model: its probabilities are a placeholder, its confidence one minus its
    evidence score), else its P(NOT ENOUGH INFO)."""
    return float(v.confidence) if v.label == NOT_ENOUGH_INFO else float(v.probs[_NEI])
