"""``sciera train cross-encoder``: from a corpus and training judgments to a model folder.

Steps: split guard -> dev split (whole queries) -> hard negatives mined by the first stage
(resumable) -> :func:`sciera.train.ce_fit.fit` (resumable per epoch) -> calibrators fitted
on dev -> the model folder with its card. Work files live in ``<model dir>.work/`` until
the model is written, so rerunning the same command resumes.
"""

from __future__ import annotations

import json
import shlex
import shutil
import sys
import time
from collections.abc import Callable, Sequence
from dataclasses import asdict, dataclass, field, replace
from pathlib import Path
from typing import Any

import numpy as np

from sciera.errors import ScieraError
from sciera.settings import Settings, load_settings
from sciera.train.card import CALIBRATOR_FILE, versions, write_card
from sciera.train.ce_fit import (
    TrainConfig,
    dev_rankings,
    first_stage_scores,
    fit,
    load_cross_encoder,
    ranking_metrics,
)
from sciera.train.data import TrainQuery, build_queries, mine_candidates, passage_texts
from sciera.train.splits import SplitGuard, dev_split

Progress = Callable[[str, int, int], None]
CE_FEATURES = ("ce",)
FUSED_FEATURES = ("ce", "first_stage_norm", "reciprocal_rank")


@dataclass(frozen=True)
class CrossEncoderJob:
    """Everything ``sciera train cross-encoder`` takes."""

    corpus: str | Path
    queries: str | Path
    qrels: str | Path
    out: str
    config: TrainConfig = field(default_factory=TrainConfig)
    retriever: str = "hybrid"
    depth: int = 30
    dev_fraction: float = 0.12
    exclude_qrels: Sequence[str | Path] = ()
    exclude_ssli: Sequence[str | Path] = ()
    fp16: bool = True
    overwrite: bool = False
    max_queries: int | None = None  # train on the first N training queries (smoke runs)


@dataclass(frozen=True)
class TrainResult:
    model_dir: Path
    card: dict[str, Any]


def model_dir_for(out: str, settings: Settings) -> Path:
    """A bare name goes under ``SCIERA_HOME/models/``; anything path-like is a path."""
    if "/" in out or out.startswith("."):
        return Path(out)
    return Path(settings.home) / "models" / out


def calibration_rows(
    dev: Sequence[TrainQuery], logits: Sequence[np.ndarray]
) -> tuple[dict[str, np.ndarray], np.ndarray]:
    """Per dev candidate: its features (ce logit, first-stage norm, reciprocal rank) and label."""
    from sciera.rerank.calibrate import first_stage_features

    cols: dict[str, list[float]] = {f: [] for f in FUSED_FEATURES}
    labels: list[int] = []
    for rec, s in zip(dev, logits, strict=True):
        fs = first_stage_features([sc for _, sc in rec.candidates], range(1, len(s) + 1))
        for (pid, _), x, f in zip(rec.candidates, s, fs, strict=True):
            cols["ce"].append(float(x))
            cols["first_stage_norm"].append(f["first_stage_norm"])
            cols["reciprocal_rank"].append(f["reciprocal_rank"])
            labels.append(int(pid.split("#", 1)[0] in rec.gold_docs))
    return {k: np.array(v) for k, v in cols.items()}, np.array(labels)


def _per_query(dev: Sequence[TrainQuery], flat: np.ndarray) -> list[np.ndarray]:
    out, i = [], 0
    for rec in dev:
        out.append(flat[i : i + len(rec.candidates)])
        i += len(rec.candidates)
    return out


def calibrate_on_dev(
    dev: Sequence[TrainQuery], logits: Sequence[np.ndarray], model_id: str
) -> tuple[dict[str, Any], dict[str, dict[str, float]]]:
    """Fit the ``ce`` and ``fused`` calibrators on dev; dev metrics of every scoring mode."""
    from sciera.rerank.calibrate import expected_calibration_error, fit_calibrator

    cols, y = calibration_rows(dev, logits)
    modes = {
        "first_stage": ranking_metrics(dev, first_stage_scores(dev)),
        "ce": ranking_metrics(dev, logits),
    }
    cals: dict[str, Any] = {}
    for mode, feats in (("calibrated", CE_FEATURES), ("fused", FUSED_FEATURES)):
        X = np.column_stack([cols[f] for f in feats])
        cal = fit_calibrator(
            X,
            y,
            feats,
            model_id=model_id,
            prompt_version=f"ce-{mode}",
            notes={"fitted_on": "dev split", "candidates": len(y)},
        )
        # no clipping to the dev range: logits above the dev maximum would all tie at the
        # top, and the logistic map is monotone, so extrapolating keeps the model's order
        cal = replace(cal, lo=None, hi=None)
        p = cal.predict_matrix(X)
        modes[mode] = ranking_metrics(dev, _per_query(dev, p))
        modes[mode]["ece"] = expected_calibration_error(p.tolist(), y.tolist())
        cals[mode] = cal
    return cals, modes


def train_cross_encoder(
    job: CrossEncoderJob,
    settings: Settings | None = None,
    progress: Progress | None = None,
    command: str | None = None,
) -> TrainResult:
    from sciera.corpus import PassageStore, load_beir_queries, load_qrels

    settings = settings or load_settings()
    cfg = job.config
    model_dir = model_dir_for(job.out, settings)
    if model_dir.exists() and not job.overwrite:
        raise ScieraError(f"{model_dir} exists; pass --overwrite to replace it")
    work = model_dir.with_name(model_dir.name + ".work")
    work.mkdir(parents=True, exist_ok=True)
    queries = load_beir_queries(job.queries)
    qrels = load_qrels(job.qrels)
    guard = SplitGuard.for_training(
        job.qrels, queries, exclude_qrels=job.exclude_qrels, exclude_ssli=job.exclude_ssli
    )
    train_ids, dev_ids = dev_split([q for q in qrels if q in queries], job.dev_fraction, cfg.seed)
    if job.max_queries is not None:
        train_ids = train_ids[: job.max_queries]
        dev_ids = dev_ids[: max(1, job.max_queries // 4)]
    started = time.monotonic()
    mined = mine_candidates(
        job.corpus,
        {q: queries[q] for q in (*train_ids, *dev_ids)},
        settings=settings,
        retriever=job.retriever,
        depth=job.depth,
        cache=work / "mined.jsonl",
        progress=progress,
    )
    with PassageStore.open(job.corpus) as store:
        fingerprint = store.fingerprint()
        train, skipped = build_queries(
            store, queries, {q: qrels[q] for q in train_ids}, mined, guard
        )
        dev, dev_skipped = build_queries(
            store, queries, {q: qrels[q] for q in dev_ids}, mined, guard
        )
        texts = passage_texts(store, [*train, *dev])
    for rec in (*train, *dev):
        guard.check_query(rec.qid, rec.text)
    guard.check_docs(
        pid.split("#", 1)[0]
        for rec in (*train, *dev)
        for pid in (*rec.positives, *(c for c, _ in rec.candidates))
    )
    state = fit(cfg, train, dev, texts, work, progress)
    if state.best_epoch is None:
        raise ScieraError("training ended before one epoch was evaluated; raise the time budget")
    ce = load_cross_encoder(str(work / "best"), max_length=cfg.max_length)
    logits = dev_rankings(ce, dev, texts)
    model_id = f"cross_encoder:{model_dir.name}"
    cals, modes = calibrate_on_dev(dev, logits, model_id)
    score_mode = max(("ce", "fused"), key=lambda m: (modes[m]["ndcg@10"], m == "ce"))
    tmp = model_dir.with_name(model_dir.name + ".tmp")
    shutil.rmtree(tmp, ignore_errors=True)
    if job.fp16:
        ce.model.half()
    ce.save_pretrained(str(tmp))
    cals["fused"].save(tmp / CALIBRATOR_FILE.replace(".json", "-fused.json"))
    cals["calibrated"].save(tmp / CALIBRATOR_FILE)
    card = {
        "name": model_dir.name,
        "kind": "cross-encoder reranker",
        "model_id": model_id,
        "base": cfg.base,
        "command": command or shlex.join(["sciera", *sys.argv[1:]]),
        "config": {
            **asdict(cfg),
            "retriever": job.retriever,
            "depth": job.depth,
            "dev_fraction": job.dev_fraction,
            "fp16": job.fp16,
        },
        "data": {
            "corpus": str(job.corpus),
            "store_fingerprint": fingerprint,
            "queries": str(job.queries),
            "qrels": str(job.qrels),
            "train_queries": len(train),
            "train_groups": sum(len(r.positives) for r in train),
            "dev_queries": len(dev),
            "dev_qids": [r.qid for r in dev],
            "negatives_from": f"{job.retriever} top-{job.depth} documents (Max-P) minus gold",
            "skipped": {"train": skipped, "dev": dev_skipped},
        },
        "splits": guard.describe(),
        "epochs": [asdict(e) for e in state.epochs],
        "best_epoch": state.best_epoch,
        "train_seconds": state.seconds,
        "wall_seconds": time.monotonic() - started,
        "dev": {"modes": modes},
        "score_mode": score_mode,
        "max_length": cfg.max_length,
        "calibrators": {
            "calibrated": CALIBRATOR_FILE,
            "fused": CALIBRATOR_FILE.replace(".json", "-fused.json"),
        },
        "versions": versions(),
    }
    write_card(tmp, card)
    if model_dir.exists():
        shutil.rmtree(model_dir)
    tmp.rename(model_dir)
    (work / "card.json").write_text(json.dumps(card, indent=1) + "\n")
    return TrainResult(model_dir, card)
