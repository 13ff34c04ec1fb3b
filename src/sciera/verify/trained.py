"""The trained verifier's two heads as the two verification protocols.

``TrainedSelector`` scores every sentence of every abstract of a claim in one batched pass
(the rationale head, mapped to P(rationale) by the Platt calibrator fitted on dev);
``TrainedVerdict`` reads each abstract's rationale sentences (the verdict head, mapped to
label probabilities by the temperature calibrator fitted on dev). Both load the same folder
once (:func:`sciera.verify.network.load_network`), so together they hold one encoder.
"""

from __future__ import annotations

from collections.abc import Sequence
from pathlib import Path
from typing import TYPE_CHECKING, Any

import numpy as np

from sciera.verify.base import AbstractText, Probs, VerdictInput
from sciera.verify.calibration import binary_probabilities, softmax
from sciera.verify.citer import per_abstract
from sciera.verify.inputs import sentence_pair, verdict_pair
from sciera.verify.network import (
    DEFAULT_MODEL,
    RATIONALE,
    VERDICT,
    VerifierNetwork,
    load_network,
    resolve_model,
)

if TYPE_CHECKING:
    from sciera.settings import Settings


class _Trained:
    def __init__(
        self,
        model: str = DEFAULT_MODEL,
        *,
        home: str | Path | None = None,
        network: VerifierNetwork | None = None,
    ) -> None:
        """The model named ``model`` (shipped, trained under ``home`` or a folder), or a
        ``network`` built already (training scores its dev split through this class)."""
        self.model_name = model
        if network is None:
            network = load_network(str(resolve_model(model, home)))
        self.network = network

    @classmethod
    def from_settings(cls, settings: Settings, **kwargs: Any) -> Any:
        kwargs.setdefault("home", settings.home)
        return cls(**kwargs)

    @property
    def card(self) -> dict[str, Any]:
        return self.network.card


class TrainedSelector(_Trained):
    """P(rationale) from the trained network's rationale head."""

    name = "trained"

    def logits(self, claim: str, abstracts: Sequence[AbstractText]) -> list[np.ndarray]:
        net = self.network
        pairs = [
            sentence_pair(claim, a.sentences, i, a.title, context=net.context, sep=net.sep)
            for a in abstracts
            for i in range(len(a.sentences))
        ]
        return per_abstract(net.logits(pairs, "rationale")[:, RATIONALE], abstracts)

    def score_many(self, claim: str, abstracts: Sequence[AbstractText]) -> list[list[float]]:
        return binary_probabilities(
            self.logits(claim, abstracts), self.network.rationale_calibrator
        )

    def cite_many(self, claim: str, abstracts: Sequence[AbstractText]) -> list[list[float]] | None:
        """P(rationale) by the network's citer (:mod:`sciera.verify.citer`), which picks
        the quoted sentences; ``None`` when the model has none (the head's scores cite)."""
        citer = self.network.citer
        return citer.score_many(claim, abstracts) if citer is not None else None


class TrainedVerdict(_Trained):
    """Label probabilities from the trained network's verdict head."""

    name = "trained"

    def logits(self, claim: str, inputs: Sequence[VerdictInput]) -> np.ndarray:
        net = self.network
        pairs = [verdict_pair(claim, v.sentences, v.title, sep=net.sep) for v in inputs]
        return net.logits(pairs, "verdict")[:, VERDICT]

    def predict_many(self, claim: str, inputs: Sequence[VerdictInput]) -> list[Probs]:
        z = self.logits(claim, inputs)
        cal = self.network.verdict_calibrator
        p = cal(z) if cal is not None else softmax(z)
        return [(float(a), float(b), float(c)) for a, b, c in p]
