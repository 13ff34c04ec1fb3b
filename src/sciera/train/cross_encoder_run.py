"""``sciera train cross-encoder``: from a corpus and training judgments to a model folder.

Steps: split guard -> dev split (whole queries) -> hard negatives mined by the first stage
(resumable) -> :func:`sciera.train.ce_fit.fit` (resumable per epoch) -> calibrators fitted
on dev -> the model folder with its card. Work files live in ``<model dir>.work/`` until
the model is written, so rerunning the same command resumes.
"""

from __future__ import annotations

import time
from collections.abc import Callable, Sequence
from dataclasses import asdict, dataclass, field, replace
from pathlib import Path
from typing import Any

import numpy as np

from sciera.artifacts.card import default_score_mode
from sciera.artifacts.files import CALIBRATOR_FILE, FUSED_CALIBRATOR_FILE
from sciera.errors import ScieraError
from sciera.settings import Settings, load_settings
from sciera.train.ce_fit import (
    CALIBRATION,
    TrainConfig,
    dev_rankings,
    first_stage_scores,
    fit,
    load_cross_encoder,
    ranking_metrics,
)
from sciera.train.data import TrainQuery
from sciera.train.prepare import DataSpec, base_card, install, open_work, prepare, run_key

Progress = Callable[[str, int, int], None]
CE_FEATURES = ("ce",)
# ce_softmax (the logits' softmax over the list) sharpened the fused calibrator on dev
# (5-fold CV by query: log-loss 0.080 -> 0.075, at P >= 0.8 kept 12 -> 44 passages)
FUSED_FEATURES = ("ce", "first_stage_norm", "reciprocal_rank", "ce_softmax")


@dataclass(frozen=True)
class CrossEncoderJob:
    """Everything ``sciera train cross-encoder`` takes."""

    data: DataSpec
    out: str
    config: TrainConfig = field(default_factory=TrainConfig)
    fp16: bool = True
    overwrite: bool = False


@dataclass(frozen=True)
class TrainResult:
    model_dir: Path
    card: dict[str, Any]


def calibration_rows(
    dev: Sequence[TrainQuery], logits: Sequence[np.ndarray]
) -> tuple[dict[str, np.ndarray], np.ndarray]:
    """Per dev candidate: its features (ce logit, first-stage norm, reciprocal rank, the
    logits' softmax over the list) and label."""
    from sciera.rerank.calibrate import first_stage_features, listwise_features

    cols: dict[str, list[float]] = {f: [] for f in FUSED_FEATURES}
    labels: list[int] = []
    for rec, s in zip(dev, logits, strict=True):
        fs = first_stage_features([sc for _, sc in rec.candidates], range(1, len(s) + 1))
        lw = listwise_features(s)
        for (pid, _), x, f, w in zip(rec.candidates, s, fs, lw, strict=True):
            row = {"ce": float(x), **f, **w}
            for name in FUSED_FEATURES:
                cols[name].append(row[name])
            labels.append(int(pid.split("#", 1)[0] in rec.gold_docs))
    return {k: np.array(v) for k, v in cols.items()}, np.array(labels)


def _per_query(dev: Sequence[TrainQuery], flat: np.ndarray) -> list[np.ndarray]:
    out, i = [], 0
    for rec in dev:
        out.append(flat[i : i + len(rec.candidates)])
        i += len(rec.candidates)
    return out


@dataclass
class Calibration:
    """The fitted calibrators and the dev metrics of every scoring mode; with calibration
    questions, the same metrics on them alone (``questions``); with calibration SSLI
    questions in the fit, theirs with the share of distractors ranked first (``ssli``)."""

    calibrators: dict[str, Any]
    modes: dict[str, dict[str, float]]
    questions: dict[str, dict[str, float]] | None = None
    ssli: dict[str, dict[str, float]] | None = None  # in-sample, calibration SSLI questions


def calibrate_on_dev(
    dev: Sequence[TrainQuery],
    logits: Sequence[np.ndarray],
    model_id: str,
    questions: Sequence[TrainQuery] = (),
    question_logits: Sequence[np.ndarray] = (),
    ssli: Sequence[TrainQuery] = (),
    ssli_logits: Sequence[np.ndarray] = (),
    ssli_weight: int = 0,
) -> Calibration:
    """Fit the ``ce`` and ``fused`` calibrators on the dev rows; with calibration
    ``questions`` (:mod:`sciera.train.calibration_questions`), rescale each fitted model as
    a whole on the dev and question rows together (:func:`~sciera.rerank.calibrate.rescale`):
    the questions move the probabilities, never the order the dev claims chose. With
    calibration-side ``ssli`` questions (:mod:`sciera.train.calibration_ssli`) and
    ``ssli_weight`` > 0, their rows, repeated that many times, join the dev rows in the
    fused weights' fit (the logit-only calibrator is monotone in the logit: left as is).
    The ranking metrics and ECE of every scoring mode on dev and, separately, on the
    questions; on the SSLI questions also the share with a distractor first."""
    from sciera.rerank.calibrate import expected_calibration_error, fit_calibrator, rescale
    from sciera.train.calibration_ssli import distractor_stats

    cols, y = calibration_rows(dev, logits)
    qcols, qy = calibration_rows(questions, question_logits)
    scols, sy = calibration_rows(ssli, ssli_logits)
    ssli_weight = ssli_weight if ssli else 0
    modes = {
        "first_stage": ranking_metrics(dev, first_stage_scores(dev)),
        "ce": ranking_metrics(dev, logits),
    }
    qmodes: dict[str, dict[str, float]] = {}
    if questions:
        qmodes["first_stage"] = ranking_metrics(questions, first_stage_scores(questions))
        qmodes["ce"] = ranking_metrics(questions, question_logits)
    smodes: dict[str, dict[str, float]] = {}
    if ssli_weight:
        for mode, scores in (("first_stage", first_stage_scores(ssli)), ("ce", ssli_logits)):
            smodes[mode] = {**ranking_metrics(ssli, scores), **distractor_stats(ssli, scores)}
    cals: dict[str, Any] = {}
    for mode, feats in (("calibrated", CE_FEATURES), ("fused", FUSED_FEATURES)):
        X = np.column_stack([cols[f] for f in feats])
        qX = np.column_stack([qcols[f] for f in feats]) if questions else X[:0]
        sX = np.column_stack([scols[f] for f in feats]) if ssli else X[:0]
        fit_X, fit_y, fitted_on = X, y, "dev split"
        if ssli_weight and mode == "fused":
            fit_X = np.vstack([X, np.repeat(sX, ssli_weight, axis=0)])
            fit_y = np.concatenate([y, np.repeat(sy, ssli_weight)])
            fitted_on = f"dev split + {len(ssli)} SSLI questions x{ssli_weight}"
        cal = fit_calibrator(
            fit_X,
            fit_y,
            feats,
            model_id=model_id,
            prompt_version=f"ce-{mode}",
            notes={"fitted_on": fitted_on, "candidates": len(fit_y)},
        )
        # no clipping to the dev range: logits above the dev maximum would all tie at the
        # top, and the logistic map is monotone, so extrapolating keeps the model's order
        cal = replace(cal, lo=None, hi=None)
        if questions:
            cal = rescale(
                cal,
                np.vstack([X, qX]),
                np.concatenate([y, qy]),
                {"rescaled_on": f"dev split + {len(questions)} calibration questions"},
            )
        for out, recs, feats_x, labels in ((modes, dev, X, y), (qmodes, questions, qX, qy)):
            if not recs:
                continue
            p = cal.predict_matrix(feats_x)
            out[mode] = ranking_metrics(recs, _per_query(recs, p))
            out[mode]["ece"] = expected_calibration_error(p.tolist(), labels.tolist())
        if ssli_weight:
            p = _per_query(ssli, cal.predict_matrix(sX))
            smodes[mode] = {**ranking_metrics(ssli, p), **distractor_stats(ssli, p)}
        cals[mode] = cal
    return Calibration(cals, modes, qmodes or None, smodes or None)


def train_cross_encoder(
    job: CrossEncoderJob,
    settings: Settings | None = None,
    progress: Progress | None = None,
    command: str | None = None,
) -> TrainResult:
    settings = settings or load_settings()
    cfg = job.config
    spec = job.data
    key = run_key({**asdict(cfg), "fp16": job.fp16}, spec)
    model_dir, work = open_work(job.out, settings, job.overwrite, key)
    started = time.monotonic()
    data = prepare(spec, settings, work, progress)
    dev, texts = data.dev, data.texts
    state = fit(cfg, data.train, dev, texts, work, progress)
    if state.best_epoch is None:
        raise ScieraError("training ended before one epoch was evaluated; raise the time budget")
    ce = load_cross_encoder(str(work / "best"), max_length=cfg.max_length)
    logits = dev_rankings(ce, dev, texts, progress=progress)
    model_id = f"cross_encoder:{model_dir.name}"
    fitted = calibrate_on_dev(
        dev,
        logits,
        model_id,
        data.calibration,
        dev_rankings(ce, data.calibration, texts, progress=progress, label=CALIBRATION),
    )
    card = base_card(
        name=model_dir.name,
        kind="cross-encoder reranker",
        base=cfg.base,
        command=command,
        config={**asdict(cfg), "fp16": job.fp16},
        spec=spec,
        data=data,
        state=state,
        started=started,
    )
    card.update(calibrated_fields(model_id, fitted, cfg.max_length))
    install(model_dir, work, card, saver(ce, fitted, job.fp16))
    return TrainResult(model_dir, card)


def calibrated_fields(model_id: str, fitted: Calibration, max_length: int) -> dict[str, Any]:
    """The card fields of a cross-encoder with calibrators fitted on dev (trained or a soup):
    id, dev metrics, default scoring, max length and calibrator files."""
    dev: dict[str, Any] = {"modes": fitted.modes}
    if fitted.questions:
        dev["calibration_questions"] = {"modes": fitted.questions}
    return {
        "model_id": model_id,
        "dev": dev,
        "score_mode": default_score_mode(fitted.modes),
        "max_length": max_length,
        "calibrators": {"calibrated": CALIBRATOR_FILE, "fused": FUSED_CALIBRATOR_FILE},
    }


def saver(ce: Any, fitted: Calibration, fp16: bool) -> Callable[[Path], None]:
    """Writes the model (float16 when ``fp16``) and its two calibrators into a folder."""

    def save(folder: Path) -> None:
        if fp16:
            ce.model.half()
        ce.save_pretrained(str(folder))
        fitted.calibrators["fused"].save(folder / FUSED_CALIBRATOR_FILE)
        fitted.calibrators["calibrated"].save(folder / CALIBRATOR_FILE)

    return save
