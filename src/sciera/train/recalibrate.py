"""``sciera train recalibrate``: refit a trained cross-encoder's calibrators on its own dev
split without retraining it: after the calibrator's features change, or to calibrate for
the first stage a user now runs (its candidates are the dev rows the calibrators see).

The dev split is rebuilt from the model card (same judgments, exclusions, fraction, seed)
and must reproduce the card's dev query ids exactly; otherwise nothing is written.

``calibration_questions=N`` adds LLM-written questions on dev-side abstracts to the rows
the calibrators are fitted on (:mod:`sciera.train.calibration_questions`); without it, the
number the card records is used again (0 for cards from before the option).

``calibration_ssli=[SET, ...]`` adds the questions of calibration-side SSLI sets, their
distractors injected into a copy of the corpus, to the rows the fused weights are fitted on
(:mod:`sciera.train.calibration_ssli`), ``calibration_ssli_weight`` times each; without
it, the sets and weight the card records are used again (none for older cards), and weight
0 drops them.

``precision="int8"`` fits a second pair of calibrators on the logits of the model's int8
ONNX export (:mod:`sciera.rerank.onnx_int8`), recorded in the card as
``calibrators_int8`` with their dev metrics (``dev.modes_int8``); the fp32 ones stay.
"""

from __future__ import annotations

import json
import shlex
import sys
import time
from collections.abc import Callable, Sequence
from dataclasses import dataclass, replace
from pathlib import Path
from typing import TYPE_CHECKING, Any

from sciera.artifacts.card import default_score_mode, read_card
from sciera.artifacts.files import CALIBRATOR_FILES
from sciera.errors import ScieraError
from sciera.settings import Settings, load_settings
from sciera.train.cross_encoder_run import (
    FUSED_FEATURES,
    Calibration,
    TrainResult,
    calibrate_on_dev,
)
from sciera.train.lineage import spec_from_card, trained_beyond_labels
from sciera.train.prepare import DataSpec, Prepared, Progress, prepare

if TYPE_CHECKING:
    from sciera.train.calibration_ssli import SsliRows


def _check_dev_split(data: Prepared, card: dict[str, Any], model: str) -> None:
    if [r.qid for r in data.dev] != list(card["data"]["dev_qids"]):
        raise ScieraError(
            f"{model}: the dev split rebuilt from the card differs from the one it was trained "
            "with (changed judgments or exclusions?); calibrators left unchanged"
        )


@dataclass(frozen=True)
class RecalibrationJob:
    """What to refit with (``None``: as the card records): the logits of ``precision``
    (fp32 or int8), ``calibration_questions`` abstracts' questions, one of each of
    ``calibration_styles``, and the SSLI sets ``calibration_ssli`` at
    ``calibration_ssli_weight``."""

    precision: str = "fp32"
    calibration_questions: int | None = None
    calibration_styles: Sequence[str] | None = None
    calibration_ssli: Sequence[str] | None = None
    calibration_ssli_weight: int | None = None


def recalibrate(
    model: str,
    settings: Settings | None = None,
    progress: Progress | None = None,
    command: str | None = None,
    job: RecalibrationJob | None = None,
) -> TrainResult:
    """Refit ``model``'s calibrators (a shipped or trained name, or a folder) in place, as
    ``job`` says."""
    from sciera.artifacts.registry import CROSS_ENCODER, resolve

    job = job or RecalibrationJob()
    if job.precision not in CALIBRATOR_FILES:
        raise ScieraError(
            f"precision must be one of {', '.join(CALIBRATOR_FILES)}, got {job.precision!r}"
        )
    settings = settings or load_settings()
    model_dir = Path(resolve(CROSS_ENCODER, model, settings.home))
    card = read_card(model_dir) if model_dir.is_dir() else None
    if card is None or card.get("kind") != "cross-encoder reranker":
        raise ScieraError(f"{model}: not a cross-encoder trained by sciera (no model card)")
    spec = _spec(card, job)
    sets, weight = _ssli_sets(card, job)
    work = Path(settings.home) / "work" / f"recalibrate-{model_dir.name}"
    work.mkdir(parents=True, exist_ok=True)
    seed_questions(model_dir, work)
    started = time.monotonic()
    if spec.calibration_questions:  # never on an abstract the model trained on (as training)
        labels = prepare(replace(spec, calibration_questions=0), settings, work, progress)
        _check_dev_split(labels, card, model)  # before the LLM is asked anything
        banned = set(spec.calibration_banned) | set(trained_beyond_labels([card], labels))
        spec = replace(spec, calibration_banned=tuple(sorted(banned)))
    data = prepare(spec, settings, work, progress)
    _check_dev_split(data, card, model)
    ssli = None
    if sets and weight:
        from sciera.train import calibration_ssli as cal_ssli

        ssli = cal_ssli.prepare_ssli(sets, spec, data, card, settings, work, progress)
    fitted = _refit(model_dir, card, data, ssli, weight, job.precision, settings, progress)
    _record(card, spec, data, fitted, ssli, (sets, weight), job.precision, settings)
    card["recalibrated" if job.precision == "fp32" else f"recalibrated_{job.precision}"].update(
        command=command or shlex.join(["sciera", *sys.argv[1:]]),
        seconds=round(time.monotonic() - started, 1),
    )
    _write(model_dir, work, card, fitted, job.precision)
    return TrainResult(model_dir, card)


def _spec(card: dict[str, Any], job: RecalibrationJob) -> DataSpec:
    spec = spec_from_card(card)
    if job.calibration_questions is not None:
        spec = replace(spec, calibration_questions=job.calibration_questions)
    if job.calibration_styles is not None:
        try:
            spec = replace(spec, calibration_styles=tuple(job.calibration_styles))
        except ValueError as exc:
            raise ScieraError(str(exc)) from None
    return spec


def _ssli_sets(card: dict[str, Any], job: RecalibrationJob) -> tuple[list[str], int]:
    """The calibration SSLI sets and weight (the job's, else the card's), checked."""
    from sciera.train.calibration_ssli import DEFAULT_WEIGHT

    recorded = card["config"].get("calibration_ssli") or {}
    sets = [str(p) for p in (job.calibration_ssli or recorded.get("sets") or [])]
    weight = job.calibration_ssli_weight
    weight = int(recorded.get("weight", DEFAULT_WEIGHT)) if weight is None else weight
    if weight < 0:
        raise ScieraError(f"calibration SSLI weight must be 0 or more, got {weight}")
    for path in sets:  # before anything is computed
        if weight and not Path(path).exists():
            raise ScieraError(
                f"{path}: no such SSLI set (--calibration-ssli)"
                if job.calibration_ssli
                else f"{path}: no such SSLI set; the card's calibration SSLI set (unpack it "
                "as the card's README says, give another with --calibration-ssli, or drop it "
                "with --calibration-ssli-weight 0)"
            )
    return sets, weight


def _refit(
    model_dir: Path,
    card: dict[str, Any],
    data: Prepared,
    ssli: SsliRows | None,
    weight: int,
    precision: str,
    settings: Settings,
    progress: Progress | None,
) -> Calibration:
    """The calibrators fitted on the logits of ``precision`` over the dev split (and the
    calibration questions and SSLI questions)."""
    from sciera.train import calibration_ssli as cal_ssli
    from sciera.train.ce_fit import CALIBRATION, dev_rankings, load_cross_encoder

    ce = load_cross_encoder(str(model_dir), max_length=int(card["max_length"]))
    score: Callable[[str, Sequence[str]], Any] | None = None
    if precision == "int8":  # the logits of the int8 ONNX export, which int8 runs score with
        from sciera.rerank.onnx_int8 import OnnxInt8Runner

        runner = OnnxInt8Runner(ce, model_dir, Path(settings.home) / "cache")

        def score(query: str, passages: Sequence[str]) -> Any:
            return runner.logits([(query, p) for p in passages])

    logits = dev_rankings(ce, data.dev, data.texts, score, progress)
    return calibrate_on_dev(
        data.dev,
        logits,
        card["model_id"],
        data.calibration,
        dev_rankings(ce, data.calibration, data.texts, score, progress, CALIBRATION),
        ssli=ssli.records if ssli else (),
        ssli_logits=(
            dev_rankings(ce, ssli.records, ssli.texts, score, progress, cal_ssli.SCORING)
            if ssli
            else ()
        ),
        ssli_weight=weight,
    )


def _record(
    card: dict[str, Any],
    spec: DataSpec,
    data: Prepared,
    fitted: Calibration,
    ssli: SsliRows | None,
    sets_weight: tuple[list[str], int],
    precision: str,
    settings: Settings,
) -> None:
    """The card updated with the refit: calibration settings, metrics, files, and how."""
    sets, weight = sets_weight
    card["config"]["calibration_questions"] = spec.calibration_questions
    card["config"]["calibration_styles"] = list(spec.calibration_styles)
    if data.calibration_card:
        card["data"]["calibration_questions"] = data.calibration_card
    else:
        card["data"].pop("calibration_questions", None)
    key = "modes" if precision == "fp32" else f"modes_{precision}"
    questions = card["dev"].setdefault("calibration_questions", {})
    if fitted.questions:
        questions[key] = fitted.questions
    else:
        questions.pop(key, None)
    if not questions:
        card["dev"].pop("calibration_questions")
    record_ssli(card, key, ssli, weight, fitted.ssli)
    s = settings.embed
    files = dict(zip(("calibrated", "fused"), CALIBRATOR_FILES[precision], strict=True))
    if precision == "int8":
        card["dev"]["modes_int8"] = fitted.modes
        card["calibrators_int8"] = files
    else:
        card["dev"]["modes"] = fitted.modes
        card["score_mode"] = default_score_mode(fitted.modes)
    card["recalibrated" if precision == "fp32" else f"recalibrated_{precision}"] = {
        "command": "",
        "date": time.strftime("%Y-%m-%d"),
        "fused_features": list(FUSED_FEATURES),
        "first_stage": f"{spec.retriever} top-{spec.depth} (embedder {s.backend}"
        + (f" {s.model}" if s.model else "")
        + ")",
        **({"calibration_ssli": {"sets": sets, "weight": weight}} if ssli else {}),
        "seconds": 0.0,
    }


def _write(
    model_dir: Path, work: Path, card: dict[str, Any], fitted: Calibration, precision: str
) -> None:
    from sciera.artifacts.card import write_card
    from sciera.artifacts.manifest import write_manifest
    from sciera.train.calibration_questions import bundle

    files = dict(zip(("calibrated", "fused"), CALIBRATOR_FILES[precision], strict=True))
    try:
        for mode, name in files.items():
            tmp = model_dir / f"{name}.tmp"
            fitted.calibrators[mode].save(tmp)
            tmp.replace(model_dir / name)
        write_card(model_dir, card)
        bundle(model_dir, work, card)
        write_manifest(model_dir)  # last: the folder's files as they now are
    except OSError as exc:
        raise ScieraError(
            f"cannot write the calibrators into {model_dir} ({exc.strerror}); copy the model "
            "folder somewhere writable and recalibrate the copy"
        ) from exc
    (work / "card.json").write_text(json.dumps(card, indent=1) + "\n")


def record_ssli(
    card: dict[str, Any],
    key: str,
    ssli: SsliRows | None,
    weight: int,
    metrics: dict[str, dict[str, float]] | None,
) -> None:
    """The card's record of the calibration SSLI questions (:mod:`sciera.train.
    calibration_ssli`) the calibrators of ``key`` (``modes``, ``modes_int8``) were fitted
    with: the sets and weight (the defaults of the next recalibration), what was used and
    refused, and the in-sample metrics; all of it removed when none were."""
    scores = card["dev"].setdefault("calibration_ssli", {})
    if ssli is None:
        card["config"].pop("calibration_ssli", None)
        card["data"].pop("calibration_ssli", None)
        scores.pop(key, None)
    else:
        card["config"]["calibration_ssli"] = {"sets": ssli.card["sets"], "weight": weight}
        card["data"]["calibration_ssli"] = ssli.card
        scores[key] = metrics
    if not scores:
        card["dev"].pop("calibration_ssli")


def seed_questions(model_dir: Path, work: Path) -> None:
    """Start from the calibration questions the model's own run logged (training or soup:
    ``<model dir>.work``), or else the log the model folder carries (a shipped or copied
    model), so recalibrating (or a soup with it first) asks the LLM only for what is
    missing; records of another generation key in the log are ignored when read."""
    import shutil

    from sciera.train.calibration_questions import CACHE, unbundle

    own = model_dir.with_name(model_dir.name + ".work") / CACHE
    if own.is_file() and not (work / CACHE).exists():
        shutil.copyfile(own, work / CACHE)
    unbundle(model_dir, work)
