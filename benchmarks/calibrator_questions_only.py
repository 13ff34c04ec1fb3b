"""Would a fused calibrator fitted on questions alone cut refusals, and at what cost?

Run from the repository root with the venv active (no network needed)::

    python benchmarks/calibrator_questions_only.py --model scifact-minilm --out ce-soup3-qcal

The shipped cross-encoder's fused calibrator is fitted on the dev claims, then rescaled as a
whole on the dev claims and the held-out calibration questions together
(:func:`sciera.train.cross_encoder_run.calibrate_on_dev`): the questions move its
probabilities, never the weights it gives the logit against the first stage's rank and
score. Questions are easier for the first stage than SciFact's claims (on the calibration
questions it ranks the source abstract first 95% of the time, on the dev claims 63%), so
a calibrator fitted on the questions alone leans on the first stage far more.

This script measures that alternative without touching any evaluation query:
1. the model's dev split and calibration questions are rebuilt from its card (logged
   questions are reused: copy ``<model>.work/calibration_questions.jsonl`` and
   ``mined.jsonl`` into ``SCIERA_HOME/work/qcal-<model>/`` first, or the LLM writes them);
2. 5-fold cross-validation over the questions (folds by question): refusals (questions
   with nothing at P >= tau) and precision of what is kept on held-out questions, for the
   shipped recipe and for a fused calibrator fitted on the questions' rows alone;
3. a copy of the model folder in ``SCIERA_HOME/models/OUT`` whose fp32 fused calibrator is
   the one fitted on all the questions, for ``rerank_trained.py --model OUT`` (PubMedQA,
   ``--dataset ssli`` and ``ssli-base``: what it does under SSLI distractors).
Writes ``benchmarks/results/calibrator_questions_only.json``.
"""

from __future__ import annotations

import argparse
import json
import shlex
import shutil
import sys
from dataclasses import replace
from pathlib import Path

import numpy as np

ROOT = Path(__file__).resolve().parents[1]
TAUS = (0.5, 0.8)


def refusals(p: np.ndarray, qi: np.ndarray, y: np.ndarray, picked: np.ndarray) -> dict:
    """Per tau over the questions ``picked`` (a boolean mask by question): how many with a
    relevant candidate keep nothing at P >= tau, and the precision of what is kept."""
    out = {}
    for tau in TAUS:
        refused = kept = good = 0
        for i in np.flatnonzero(picked):
            rows = qi == i
            keep = p[rows] >= tau
            kept, good = kept + int(keep.sum()), good + int((keep & (y[rows] == 1)).sum())
            refused += int(y[rows].sum() > 0 and not keep.any())
        out[str(tau)] = {
            "questions": int(picked.sum()),
            "refused": refused,
            "kept": kept,
            "precision": good / kept if kept else None,
        }
    return out


def work_dir(settings, model_dir: Path) -> Path:
    """Where the scripts keep a model's logged questions and mined candidates."""
    return Path(settings.home) / "work" / f"qcal-{model_dir.name}"


def rebuild(model: str):
    """(settings, model folder, card, Prepared): ``model``'s dev split and calibration
    questions rebuilt from its card in ``SCIERA_HOME/work/qcal-<model>`` (logged questions
    and mined candidates there are reused), checked against the card's dev ids."""
    from sciera.artifacts.card import read_card
    from sciera.rerank.cross_encoder import resolve_model
    from sciera.settings import load_settings
    from sciera.train.lineage import spec_from_card
    from sciera.train.prepare import prepare

    settings = load_settings()
    model_dir = Path(resolve_model(model, settings.home))
    card = read_card(model_dir)
    data = prepare(spec_from_card(card), settings, work_dir(settings, model_dir), None)
    if [r.qid for r in data.dev] != list(card["data"]["dev_qids"]):
        raise SystemExit(f"{model}: the dev split rebuilt from its card differs")
    return settings, model_dir, card, data


def fit_fused(X: np.ndarray, y: np.ndarray):
    """A fused calibrator (FUSED_FEATURES) fitted on ``X``/``y``, unclipped as shipped."""
    from sciera.rerank.calibrate import fit_calibrator
    from sciera.train.cross_encoder_run import FUSED_FEATURES

    cal = fit_calibrator(X, y, FUSED_FEATURES, model_id="m", prompt_version="ce-fused")
    return replace(cal, lo=None, hi=None)


def write_copy(settings, model_dir: Path, card: dict, fused, name: str) -> Path:
    """A copy of the model folder as ``SCIERA_HOME/models/<name>`` whose fp32 fused
    calibrator is ``fused`` (its int8 calibrators removed: int8 runs fall back to fp32's)."""
    from sciera.artifacts.card import write_card

    copy = Path(settings.home) / "models" / name
    shutil.rmtree(copy, ignore_errors=True)
    shutil.copytree(model_dir, copy)
    fused.save(copy / card["calibrators"]["fused"])
    for mode in card.get("calibrators_int8") or {}:
        (copy / card["calibrators_int8"][mode]).unlink()
    int8 = ("calibrators_int8", "recalibrated_int8")
    write_card(copy, {**{k: v for k, v in card.items() if k not in int8}, "name": name})
    return copy


def main() -> None:
    ap = argparse.ArgumentParser(
        description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter
    )
    ap.add_argument("--model", default="scifact-minilm")
    ap.add_argument("--out", default="ce-soup3-qcal", help="name of the model copy")
    ap.add_argument("--folds", type=int, default=5)
    args = ap.parse_args()
    from sciera.rerank.calibrate import Calibrator, rescale
    from sciera.train.ce_fit import dev_rankings, load_cross_encoder
    from sciera.train.cross_encoder_run import FUSED_FEATURES, calibration_rows

    settings, model_dir, card, data = rebuild(args.model)
    ce = load_cross_encoder(str(model_dir), max_length=int(card["max_length"]))
    dev_cols, dev_y = calibration_rows(data.dev, dev_rankings(ce, data.dev, data.texts))
    q_cols, q_y = calibration_rows(data.calibration, dev_rankings(ce, data.calibration, data.texts))
    X = np.column_stack([dev_cols[f] for f in FUSED_FEATURES])
    QX = np.column_stack([q_cols[f] for f in FUSED_FEATURES])
    qi = np.concatenate([[i] * len(r.candidates) for i, r in enumerate(data.calibration)])
    yesno = np.array([r.qid.startswith("cal-yesno") for r in data.calibration])
    folds = np.random.default_rng(0).permutation(len(data.calibration)) % args.folds

    shipped_recipe, questions_only = np.zeros(len(q_y)), np.zeros(len(q_y))
    on_dev = fit_fused(X, dev_y)
    for k in range(args.folds):
        train = folds[qi] != k
        joint = rescale(on_dev, np.vstack([X, QX[train]]), np.r_[dev_y, q_y[train]], {})
        shipped_recipe[~train] = joint.predict_matrix(QX[~train])
        questions_only[~train] = fit_fused(QX[train], q_y[train]).predict_matrix(QX[~train])
    out: dict = {
        "command": shlex.join(["python", *sys.argv]),
        "model": args.model,
        "questions": {"what_how": int((~yesno).sum()), "yesno": int(yesno.sum())},
        "cross_validation": {
            name: {
                style: refusals(p, qi, q_y, mask)
                for style, mask in (("what_how", ~yesno), ("yesno", yesno))
            }
            for name, p in (("shipped_recipe", shipped_recipe), ("questions_only", questions_only))
        },
    }
    shipped = Calibrator.load(model_dir / card["calibrators"]["fused"])
    final = replace(
        fit_fused(QX, q_y),
        model_id=shipped.model_id,
        notes={"fitted_on": f"{len(data.calibration)} calibration questions alone (experiment)"},
    )
    out["calibrator"] = {"coef": final.coef, "intercept": final.intercept}
    out["shipped_calibrator"] = {"coef": shipped.coef, "intercept": shipped.intercept}
    copy = write_copy(settings, model_dir, card, final, args.out)
    out["model_copy"] = str(copy)
    path = ROOT / "benchmarks" / "results" / "calibrator_questions_only.json"
    path.write_text(json.dumps(out, indent=1) + "\n")
    print(json.dumps(out["cross_validation"], indent=1))


if __name__ == "__main__":
    main()
