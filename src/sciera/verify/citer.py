"""The citation selector: which sentences a verdict cites, scored apart from the verdict.

The verifier's rationale head shares its encoder with the verdict head, and training them
together costs the head its sentence ranking. The citer is the shipped relevance
cross-encoder (``scifact-minilm``) with low-rank adapters trained on the rationale labels
alone (:mod:`sciera.train.citer_fit`): its card section names the base model, the adapter
file (about 1.6 MB in float16) and how it reads a sentence; loading folds the adapters into
a copy of the base weights (:func:`sciera.embed.adapters.merge_adapters`), so scoring costs
one cross-encoder pass over the sentences. The rationale head still picks what the verdict
reads; the citer picks what it cites (:func:`sciera.verify.verifier.read_and_cite`), mapped to
P(rationale) by a Platt calibrator fitted on the dev split.

A citer may be an ensemble: the section's ``adapters`` a list of files, each the same base
with its own adapters (trained on the same labels by other recipes), and its logit the mean
of theirs, calibrated as one. Each member costs one more pass over the sentences.
"""

from __future__ import annotations

import copy
import threading
from collections.abc import Mapping, Sequence
from pathlib import Path
from typing import Any

import numpy as np

from sciera.embed.plain import pair_logits
from sciera.errors import ScieraError, require
from sciera.verify.base import AbstractText
from sciera.verify.inputs import sentence_pair


def per_abstract(
    flat: Sequence[float] | np.ndarray, abstracts: Sequence[AbstractText]
) -> list[np.ndarray]:
    """Per-sentence values scored in one flat batch, split back into one array per abstract."""
    values = np.asarray(flat, dtype=float)
    sizes = [len(a.sentences) for a in abstracts]
    if len(values) != sum(sizes):
        raise ValueError(f"{len(values)} values for {sum(sizes)} sentences")
    return list(np.split(values, np.cumsum(sizes)[:-1])) if sizes else []


class Citer:
    """(claim, sentence) -> the citer's logit, and P(rationale) through ``calibrator``
    (``None``: a plain sigmoid). ``model`` is a one-output sequence classifier (adapters
    merged, or still wrapped while training); ``members`` are more such classifiers over the
    same tokenizer, whose logits are averaged with ``model``'s (an ensemble)."""

    def __init__(
        self,
        model: Any,
        tokenizer: Any,
        *,
        members: Sequence[Any] = (),
        context: str = "none",
        max_length: int = 128,
        calibrator: Any = None,
        batch_size: int = 64,
    ) -> None:
        self.model, self.tokenizer = model, tokenizer
        self.models = [model, *members]
        self.context, self.max_length = context, max_length
        self.calibrator, self.batch_size = calibrator, batch_size
        self.sep = tokenizer.sep_token or "[SEP]"
        self._lock = threading.Lock()

    @classmethod
    def load(cls, folder: str | Path, section: Mapping[str, Any], batch_size: int = 64) -> Citer:
        """The citer a verifier folder's card ``section`` describes: its ``base``
        cross-encoder (a shipped name or a folder) with the ``adapters`` file of ``folder``
        merged in (a list of files: an ensemble, one copy of the base per file), and its
        ``calibrator`` file."""
        from sciera.artifacts.registry import CROSS_ENCODER, resolve
        from sciera.embed.adapters import load_adapters, merge_adapters
        from sciera.embed.plain import load_encoder
        from sciera.verify import calibration

        require("transformers", "dense")
        folder = Path(folder)
        for key in ("base", "adapters"):
            if key not in section:
                raise ScieraError(f"{folder}: the card's citer section has no {key!r}")
        files = section["adapters"]
        files = [files] if isinstance(files, str) else list(files)
        if not files:
            raise ScieraError(f"{folder}: the card's citer section names no adapter file")
        paths = [folder / name for name in files]
        for path in paths:
            if not path.is_file():
                raise ScieraError(f"{path}: the citer's adapter file is missing")
        base, tokenizer = load_encoder(resolve(CROSS_ENCODER, section["base"]), "classifier")
        # one read of the base: each further member merges into a copy made before any merge
        models = [base] + [copy.deepcopy(base) for _ in paths[1:]]
        for path, model in zip(paths, models, strict=True):
            state, rank, alpha = load_adapters(path)
            try:
                merge_adapters(model, state, rank, alpha)
            except ValueError as exc:
                raise ScieraError(f"{path}: {exc}") from None
        cal = section.get("calibrator")
        return cls(
            models[0],
            tokenizer,
            members=models[1:],
            context=str(section.get("context", "none")),
            max_length=int(section.get("max_length", 128)),
            calibrator=calibration.load(folder / cal) if cal else None,
            batch_size=batch_size,
        )

    def pairs(self, claim: str, abstract: AbstractText) -> list[tuple[str, str]]:
        return [
            sentence_pair(
                claim, abstract.sentences, i, abstract.title, context=self.context, sep=self.sep
            )
            for i in range(len(abstract.sentences))
        ]

    def logits(self, claim: str, abstracts: Sequence[AbstractText]) -> list[np.ndarray]:
        """Per abstract, the logit of each sentence (one batched pass per member, averaged)."""
        pairs = [p for a in abstracts for p in self.pairs(claim, a)]
        if not pairs:
            return per_abstract([], abstracts)
        with self._lock:
            flat = np.mean(
                [
                    pair_logits(m, self.tokenizer, pairs, self.max_length, self.batch_size, 0)
                    for m in self.models
                ],
                axis=0,
            )
        return per_abstract(flat, abstracts)

    def score_many(self, claim: str, abstracts: Sequence[AbstractText]) -> list[list[float]]:
        """Per abstract, P(rationale) of each sentence."""
        from sciera.verify.calibration import binary_probabilities

        return binary_probabilities(self.logits(claim, abstracts), self.calibrator)
