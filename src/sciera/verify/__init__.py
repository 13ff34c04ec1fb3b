"""Claim verification: which sentences of an abstract are evidence for a claim, and whether
the abstract supports it, contradicts it or does not say (SciFact's task).

    from sciera.verify import verify_abstracts, TrainedSelector, TrainedVerdict, VerifyPolicy
    selector, verdict = TrainedSelector(), TrainedVerdict()  # the shipped model, one encoder
    result = verify_abstracts(claim, [(doc_id, title, sentences), ...], selector, verdict,
                              VerifyPolicy.from_card(verdict.card))
    result.label, result.confidence, result.supporting, result.contradicting
    result.verdicts[0].rationales  # verbatim sentences with their indices

Heavy imports (torch, transformers) happen when a trained backend is built.
"""

from __future__ import annotations

from typing import Any

from sciera.verify.aggregate import aggregate
from sciera.verify.base import AbstractText, RationaleSelector, VerdictInput, VerdictModel
from sciera.verify.verifier import VerifyPolicy, verify_abstracts

__all__ = [
    "AbstractText",
    "RationaleSelector",
    "TrainedSelector",
    "TrainedVerdict",
    "VerdictInput",
    "VerdictModel",
    "VerifyPolicy",
    "aggregate",
    "verify_abstracts",
]


def __getattr__(name: str) -> Any:
    if name in ("TrainedSelector", "TrainedVerdict"):
        from sciera.verify import trained

        return getattr(trained, name)
    raise AttributeError(name)
