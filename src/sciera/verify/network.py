"""The trained verifier network: one MiniLM-family encoder with two heads.

The network is a Hugging Face sequence classifier with four outputs: output 0 is the
rationale head's logit (is this sentence evidence for the claim?), outputs 1-3 the verdict
head's logits over SUPPORT / CONTRADICT / NOT ENOUGH INFO. Both heads read the same
encoder, so one set of weights (float16 on disk, float32 in memory: float16 matmuls are
slow on CPU) serves rationale selection and label prediction.

A model folder holds the weights and tokenizer, ``sciera-card.json`` (what the loaders read:
heads, max lengths, the selector's context, calibrator files, the decision policy chosen on
dev) and the calibrators, and its manifest; optionally a citer (a card ``citer`` section and
its adapter file: :mod:`sciera.verify.citer`), which picks the quoted sentences. Resolved, in
order: a model sciera ships (:data:`sciera.artifacts.registry.SHIPPED`); one you trained
(``SCIERA_HOME/models/<name>``); a local folder.
"""

from __future__ import annotations

import threading
from collections.abc import Sequence
from functools import lru_cache
from pathlib import Path
from typing import Any

import numpy as np

from sciera.artifacts.card import read_card as _read_card
from sciera.artifacts.files import CARD_FILE
from sciera.embed.plain import pair_logits
from sciera.errors import ScieraError, require

DEFAULT_MODEL = "scifact-verifier"
RATIONALE = 0
VERDICT = slice(1, 4)
NUM_LABELS = 4


def resolve_model(model: str, home: str | Path | None = None) -> Path:
    """The folder of ``model`` (a shipped name, a trained name under ``home/models``, or a
    folder), checked against its manifest (:func:`sciera.artifacts.registry.open_model`);
    it must carry a verifier's card."""
    from sciera.artifacts.registry import VERIFIER, open_model

    folder = open_model(VERIFIER, model, home)
    if folder.card is None or "heads" not in folder.card:
        raise ScieraError(
            f"verifier {model!r}: no verifier model card ({CARD_FILE}) in {folder.path}; name "
            "a model made by `sciera train verifier` or the shipped one "
            f"({DEFAULT_MODEL})"
        )
    return Path(folder.path)


def verifier_identity(model: str, home: str | Path | None = None) -> str:
    """The files of verifier ``model`` hashed (:func:`~sciera.artifacts.manifest.folder_digest`),
    so results of one rebuilt under the same name are told apart; the name as given when
    it does not resolve (building the stage says why)."""
    from sciera.artifacts.manifest import folder_digest

    try:
        return folder_digest(resolve_model(model, home))
    except ScieraError:
        return model


def read_card(path: str | Path) -> dict[str, Any]:
    card = _read_card(path)
    if card is None:
        raise ScieraError(f"{path}: no {CARD_FILE}")
    return card


def check_calibrators(path: str | Path, card: dict[str, Any]) -> None:
    """A one-line error for a card listing a calibrator this version no longer reads: the
    rationale combiner (``calibrate.rationale_relevance``, removed; see History)."""
    if "rationale_combiner" in card.get("calibrators", {}):
        raise ScieraError(
            f"{path}: this version of sciera no longer reads a rationale combiner "
            "(its card lists 'rationale_combiner'); retrain the verifier without "
            "calibrate.rationale_relevance"
        )


class VerifierNetwork:
    """A verifier network ready to score: the model, its tokenizer, how it reads its inputs
    (``inputs``: the selector's context and each head's max length) and its calibrators
    (``None``: a plain sigmoid / softmax). :meth:`load` reads a model folder; training builds
    one around the model it is training, so dev evaluation runs the inference code."""

    def __init__(
        self,
        model: Any,
        tokenizer: Any,
        inputs: dict[str, Any],
        *,
        card: dict[str, Any] | None = None,
        rationale_calibrator: Any = None,
        verdict_calibrator: Any = None,
        citer: Any = None,
        batch_size: int = 32,
        path: Path | None = None,
    ) -> None:
        self.model, self.tokenizer, self.inputs = model, tokenizer, dict(inputs)
        self.card = card or {"inputs": self.inputs}
        self.rationale_calibrator = rationale_calibrator
        self.verdict_calibrator = verdict_calibrator
        # which sentences are quoted, scored apart from the verdict (None: the rationale head)
        self.citer = citer
        self.batch_size = batch_size
        self.path = path
        self.sep = tokenizer.sep_token or "[SEP]"
        self._lock = threading.Lock()  # torch modules are not safe to call concurrently

    @classmethod
    def load(cls, path: str | Path, batch_size: int = 32) -> VerifierNetwork:
        """A model folder written by ``sciera train verifier``."""
        from sciera.verify import calibration
        from sciera.verify.citer import Citer

        path = Path(path)
        card = read_card(path)
        check_calibrators(path, card)
        transformers = require("transformers", "dense")
        import torch

        tokenizer = transformers.AutoTokenizer.from_pretrained(str(path))
        model = transformers.AutoModelForSequenceClassification.from_pretrained(
            str(path), dtype=torch.float32
        )
        model.float().eval()
        cal = card.get("calibrators", {})
        return cls(
            model,
            tokenizer,
            card["inputs"],
            card=card,
            rationale_calibrator=calibration.load(path / cal["rationale"])
            if "rationale" in cal
            else None,
            verdict_calibrator=calibration.load(path / cal["verdict"])
            if "verdict" in cal
            else None,
            citer=Citer.load(path, card["citer"]) if "citer" in card else None,
            batch_size=batch_size,
            path=path,
        )

    @property
    def context(self) -> str:
        return str(self.inputs["context"])

    def max_length(self, head: str) -> int:
        return int(self.inputs[f"max_length_{head}"])

    def logits(self, pairs: Sequence[tuple[str, str]], head: str) -> np.ndarray:
        with self._lock:
            return pair_logits(
                self.model, self.tokenizer, pairs, self.max_length(head), self.batch_size
            )


@lru_cache(maxsize=4)
def load_network(path: str) -> VerifierNetwork:
    """One loaded network per folder, shared by the selector and the verdict backends."""
    return VerifierNetwork.load(path)
