"""Cross-encoder reranker: a sequence-pair classifier scoring (query, passage) pairs jointly
(run with ``transformers`` alone, :class:`sciera.embed.plain.PairClassifier`: the logits
sentence-transformers' ``CrossEncoder`` gives, without its import).

``model`` is resolved, in order, as: a model sciera ships
(:data:`sciera.artifacts.registry.SHIPPED`, the default ``scifact-minilm``, trained on
SciFact train by ``sciera train cross-encoder``); a model you trained,
``SCIERA_HOME/models/<name>``; a local directory; a hub name such as
``cross-encoder/ms-marco-MiniLM-L6-v2`` (needs internet the first time). A folder is
checked against its manifest before it is loaded (:func:`sciera.artifacts.registry.open_model`).

Scores. A folder trained by sciera carries a card and calibrators fitted on its dev split:
``score="calibrated"`` maps the logit to P(relevant); ``score="fused"`` maps the logit
together with the first stage's score and rank (min-max over the candidates, 1/rank) to
P(relevant); ``score="auto"`` (the default) takes ``fused`` unless the card's dev metrics
show the logit alone ranking better by more than 0.01 nDCG@10
(:func:`sciera.artifacts.card.default_score_mode`). Both
are probabilities, so a threshold such as DeepEra's tau means the same for either. Any
other model has no calibrator: its scores are raw (``score="raw"``), comparable within that
model only.

Precision. ``fp32`` runs the model in torch; ``int8`` runs its int8 ONNX export through ONNX
Runtime (:mod:`sciera.rerank.onnx_int8`; exported on first use into ``SCIERA_HOME/cache``),
with the calibrators the card fitted on the int8 logits (``calibrators_int8``, written by
``sciera train recalibrate NAME --precision int8``); a card without them falls back to the
fp32 calibrators with a warning. ``auto`` (the default) takes int8 for a model whose card
has int8 calibrators (the shipped one) when onnxruntime is installed and the CPU runs int8
faster (AVX-512 or VNNI on x86; an AVX2-only CPU runs fp32 faster), else fp32. The
resolved choice is the ``precision`` attribute.
"""

from __future__ import annotations

import logging
from collections.abc import Sequence
from pathlib import Path
from typing import TYPE_CHECKING, Any

from sciera.artifacts.manifest import folder_digest
from sciera.artifacts.registry import CROSS_ENCODER, open_model, resolve
from sciera.embed.plain import PairClassifier
from sciera.errors import ScieraError, require
from sciera.rerank.base import RerankerBase, rescored
from sciera.types import Passage, Ranking

if TYPE_CHECKING:
    from sciera.rerank.calibrate import Calibrator
    from sciera.settings import Settings

DEFAULT_MODEL = "scifact-minilm"
SCORES = ("auto", "raw", "calibrated", "fused")
PRECISIONS = ("auto", "fp32", "int8")

log = logging.getLogger(__name__)


def resolve_model(model: str, home: str | Path | None = None) -> str:
    """A shipped name, a trained name under ``home/models``, a local path, or ``model`` as
    given (a hub name)."""
    return resolve(CROSS_ENCODER, model, home)


class CrossEncoderReranker(RerankerBase):
    """Scores (query, passage.contents) pairs jointly; higher = more relevant."""

    name = "cross_encoder"

    def __init__(
        self,
        model: str = DEFAULT_MODEL,
        *,
        home: str | Path | None = None,
        score: str = "auto",
        max_length: int | None = None,
        batch_size: int = 32,
        device: str = "cpu",
        precision: str = "auto",
    ) -> None:
        if score not in SCORES:
            raise ValueError(f"score must be one of {', '.join(SCORES)}, got {score!r}")
        if precision not in PRECISIONS:
            raise ValueError(f"precision must be one of {', '.join(PRECISIONS)}, got {precision!r}")
        require("transformers", "dense")
        self.model_name = model
        folder = open_model(CROSS_ENCODER, model, home)  # a folder: checked, its card read
        self.path, self.card, self.check = folder.path, folder.card, folder.check
        length = max_length or (self.card or {}).get("max_length") or 512
        self.batch_size = batch_size
        self._model = PairClassifier(self.path, length, device)
        self.precision = precision = _resolve_precision(precision, self.card)
        self._int8 = None
        if precision == "int8":
            from sciera.rerank.onnx_int8 import OnnxInt8Runner
            from sciera.settings import load_settings

            cache = Path(home if home is not None else load_settings().home) / "cache"
            self._int8 = OnnxInt8Runner(self._model, self.path, cache)
        self.score_mode = self._mode(score)
        self.calibrator = self._calibrator(self.score_mode)

    def _mode(self, score: str) -> str:
        if score == "auto":
            if self.card is None:
                return "raw"
            from sciera.artifacts.card import default_score_mode

            modes = (self.card.get("dev") or {}).get("modes")
            mode = default_score_mode(modes) if modes else self.card.get("score_mode")
            return "fused" if mode == "fused" else "calibrated"
        if score != "raw" and self.card is None:
            raise ScieraError(
                f"cross-encoder {self.model_name!r} has no sciera card, so no calibrator: "
                "use score='raw' or a model trained by `sciera train cross-encoder`"
            )
        return score

    def _calibrator(self, mode: str) -> Calibrator | None:
        if mode == "raw":
            return None
        from sciera.rerank.calibrate import Calibrator

        files = calibrator_files(self.card, self.precision, self.model_name)  # type: ignore[arg-type]
        return Calibrator.load(Path(self.path) / files[mode])

    @classmethod
    def from_settings(cls, settings: Settings, **kwargs: Any) -> CrossEncoderReranker:
        model = kwargs.pop("model", None) or DEFAULT_MODEL
        kwargs.setdefault("home", settings.home)
        kwargs.setdefault("precision", settings.cross_encoder.precision)
        return cls(model, **kwargs)

    @classmethod
    def identity(cls, settings: Settings, **params: Any) -> str:
        """The contents of the model ``params`` name (weights, calibrators, card), hashed, so
        a model retrained or replaced under the same name is told apart; a hub name as given."""
        model = params.get("model") or DEFAULT_MODEL
        path = Path(resolve_model(model, params.get("home") or settings.home))
        return folder_digest(path) if path.is_dir() else model

    def logits(self, query: str, passages: Sequence[Passage]) -> list[float]:
        """The model's raw outputs (no activation) for each passage."""
        if not passages:
            return []
        pairs = [(query, p.contents) for p in passages]
        if self._int8 is not None:
            return [float(v) for v in self._int8.logits(pairs, self.batch_size)]
        return [float(v) for v in self._model.logits(pairs, self.batch_size)]

    def assess(self, query: str, ranking: Ranking) -> tuple[list[float], list[float]]:
        """(scores, logits) of ``ranking``'s passages in input order: P(relevant) from the
        calibrator (the first-stage features come from ``ranking``), or the raw logits."""
        from sciera.rerank.calibrate import first_stage_features, listwise_features

        logits = self.logits(query, [it.passage for it in ranking.items])
        if self.calibrator is None:
            return logits, logits
        feats = first_stage_features(
            [it.score for it in ranking.items], [it.rank for it in ranking.items]
        )
        probs = [
            self.calibrator.predict({"ce": x, **f, **lw})
            for x, f, lw in zip(logits, feats, listwise_features(logits), strict=True)
        ]
        return probs, logits

    def rerank(self, query: str, ranking: Ranking) -> Ranking:
        scores, logits = self.assess(query, ranking)
        if self.calibrator is None:
            return rescored(ranking, scores, self.name, query=query)
        details = [
            {"score": p, "logit": x, "mode": self.score_mode, "precision": self.precision}
            for p, x in zip(scores, logits, strict=True)
        ]
        return rescored(ranking, scores, self.name, details=details, query=query, calibrated=True)

    def score(self, query: str, passage: Passage) -> float:
        """One passage alone: P(relevant) from the logit when calibrated (a lone passage has
        no first-stage context, so the ``fused`` mode falls back to the logit calibrator),
        else the raw logit."""
        x = self.logits(query, [passage])[0]
        if self.calibrator is None:
            return x
        if self.score_mode == "fused":
            return self._calibrator("calibrated").predict({"ce": x})  # type: ignore[union-attr]
        return self.calibrator.predict({"ce": x})


def _resolve_precision(precision: str, card: dict[str, Any] | None) -> str:
    """``auto``: int8 where the card calibrated it, onnxruntime is installed and the CPU
    runs int8 faster than fp32 (:func:`sciera.rerank.onnx_int8.int8_is_faster`)."""
    if precision != "auto":
        return precision
    if not (card and card.get("calibrators_int8")):
        return "fp32"
    import importlib.util

    if importlib.util.find_spec("onnxruntime") is None:
        return "fp32"
    from sciera.rerank.onnx_int8 import int8_is_faster

    return "int8" if int8_is_faster() else "fp32"


def calibrator_files(card: dict[str, Any], precision: str, model: str) -> dict[str, str]:
    """The card's calibrator files for the logits of ``precision``: int8 logits differ
    from fp32 ones, so an int8 run uses calibrators fitted on them when the card has them."""
    if precision == "int8":
        if card.get("calibrators_int8"):
            return dict(card["calibrators_int8"])
        log.warning(
            "cross-encoder %r has no calibrators fitted on its int8 logits; using the fp32 "
            "ones (refit: sciera train recalibrate %s --precision int8)",
            model,
            model,
        )
    return dict(card["calibrators"])
