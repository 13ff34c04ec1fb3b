"""Can the fused calibrator learn from SSLI distractors met in a corpus, and what does it cost?

Run from the repository root with the venv active (no network needed)::

    python benchmarks/calibrator_with_ssli.py --model scifact-minilm \\
        --set corpora/ssli-scifact-cal/instances.jsonl --out ce-soup3-scal

The shipped cross-encoder's fused calibrator weighs its logit against the first stage's
score and rank with weights fitted on dev claims, where no distractor sits in the corpus:
it learns to trust the first stage, which SSLI distractors win (through the product path a
distractor comes first for 27 of 96 evaluation questions, 9 with the logit alone; session
35). Fitted on calibration questions alone it trusts the first stage more still.

This script adds a *calibration-side* SSLI set to the rows the weights are fitted on: a set
built (``sciera dataset build``) on SciFact abstracts outside every evaluation set, every
training set and SciFact's judged documents, whose distractors are injected into a copy of
SciFact; each question's candidates are the first stage's top 30 documents over that copy,
as for the dev claims. The model's own split guard (from its card) runs over them, and a
question whose gold abstract the model trained on or is evaluated on is refused. The rows
are prepared as ``sciera train recalibrate --calibration-ssli SET`` prepares them
(:func:`sciera.train.calibration_ssli.prepare_ssli`; the copy in
``SCIERA_HOME/work/qcal-<model>/ssli-corpus-<key>``); that command fits the ``dev+ssli xK``
variant below.

Variants of the fused calibrator (rows: dev claims D, calibration questions Q, SSLI
questions S; ``xK``: S's rows repeated K times, a weight):
- ``shipped``: weights on D, rescaled on D + Q (the shipped recipe);
- ``dev+ssli xK``: weights on D + S xK, rescaled on D + Q;
- ``all xK``: weights on D + Q + S xK, no rescale.
5-fold cross-validation by question over Q and S together (D always in the fit): on
held-out S, hit@1, a distractor first, tau 0.8 keeping nothing / keeping a distractor; on
held-out Q, refusals at tau 0.8 by style and the precision kept. No evaluation query is
read. The variant ``--pick`` names (``auto``: the fewest held-out SSLI questions with a
distractor first, then the fewest held-out questions refused; never the evaluation) is
fitted on all rows and written into a copy of the model (``SCIERA_HOME/models/OUT``) for
``rerank_trained.py --model OUT``. Writes ``benchmarks/results/calibrator_with_ssli.json``.
"""

from __future__ import annotations

import argparse
import json
import shlex
import sys
from dataclasses import replace
from pathlib import Path

import numpy as np

ROOT = Path(__file__).resolve().parents[1]
TAU = 0.8
WEIGHTS = (1, 3, 10)


def per_question(p: np.ndarray, y: np.ndarray, qi: np.ndarray, dist: np.ndarray, picked) -> dict:
    """Over the questions ``picked`` (indices): hit@1, a distractor first, and at tau 0.8
    the answerable ones keeping nothing, the passages kept, their precision, distractors
    kept."""
    hit = first_d = refused = kept = good = kept_d = 0
    for i in picked:
        rows = np.flatnonzero(qi == i)
        top = rows[int(np.argmax(p[rows]))]
        hit += int(y[top] == 1)
        first_d += int(dist[top])
        keep = rows[p[rows] >= TAU]
        kept, good, kept_d = (
            kept + len(keep),
            good + int(y[keep].sum()),
            kept_d + int(dist[keep].sum()),
        )
        refused += int(y[rows].sum() > 0 and not len(keep))
    n = len(picked)
    return {
        "questions": n,
        "hit@1": hit / n if n else None,
        "distractor_first": first_d,
        f"refused@{TAU}": refused,
        f"kept@{TAU}": kept,
        f"precision@{TAU}": good / kept if kept else None,
        f"distractors_kept@{TAU}": kept_d,
    }


def pick_key(row: dict) -> tuple[int, int]:
    """``--pick auto`` orders the variants by held-out SSLI questions with a distractor
    first, then held-out calibration questions refused at tau 0.8 (both styles)."""
    refused = sum(row[k][f"refused@{TAU}"] for k in ("questions_what_how", "questions_yesno"))
    return row["ssli"]["distractor_first"], refused


def main() -> None:
    ap = argparse.ArgumentParser(
        description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter
    )
    ap.add_argument("--model", default="scifact-minilm")
    ap.add_argument("--set", default="corpora/ssli-scifact-cal/instances.jsonl")
    ap.add_argument("--out", default="ce-soup3-scal", help="name of the model copy")
    ap.add_argument(
        "--pick",
        default=None,
        help="variant to write into the copy: 'auto' (see pick_key) or a name, e.g. 'all x3'",
    )
    ap.add_argument("--folds", type=int, default=5)
    args = ap.parse_args()
    from calibrator_questions_only import fit_fused, rebuild, work_dir, write_copy
    from sciera.datasets.ssli.inject import is_distractor
    from sciera.rerank.calibrate import Calibrator, rescale
    from sciera.train.calibration_ssli import prepare_ssli
    from sciera.train.ce_fit import dev_rankings, load_cross_encoder
    from sciera.train.cross_encoder_run import FUSED_FEATURES, calibration_rows
    from sciera.train.lineage import spec_from_card

    settings, model_dir, card, data = rebuild(args.model)
    # the SSLI questions over SciFact with the set's distractors injected, as
    # `sciera train recalibrate --calibration-ssli` prepares them (same guard and candidates)
    rows_s = prepare_ssli(
        [ROOT / args.set],
        spec_from_card(card),
        data,
        card,
        settings,
        work_dir(settings, model_dir),
    )
    ssli, texts = rows_s.records, {**data.texts, **rows_s.texts}
    refused, skipped = rows_s.card["refused_seen_gold"], rows_s.card["skipped"]

    ce = load_cross_encoder(str(model_dir), max_length=int(card["max_length"]))
    rows = {}
    for name, recs in (("D", data.dev), ("Q", data.calibration), ("S", ssli)):
        cols, y = calibration_rows(recs, dev_rankings(ce, recs, texts))
        qi = np.concatenate([[i] * len(r.candidates) for i, r in enumerate(recs)])
        dist = np.array([is_distractor(p.split("#", 1)[0]) for r in recs for p, _ in r.candidates])
        rows[name] = (np.column_stack([cols[f] for f in FUSED_FEATURES]), y, qi, dist)
    (DX, Dy, Dqi, Dd), (QX, Qy, Qqi, Qd), (SX, Sy, Sqi, Sd) = rows["D"], rows["Q"], rows["S"]
    yesno = np.array([r.qid.startswith("cal-yesno") for r in data.calibration])
    rng = np.random.default_rng(0)
    qfold = rng.permutation(len(data.calibration)) % args.folds
    sfold = rng.permutation(len(ssli)) % args.folds

    def variant(name: str, qmask: np.ndarray, smask: np.ndarray) -> Calibrator:
        """``name``'s calibrator fitted with the Q rows ``qmask`` and S rows ``smask``."""
        if name == "shipped":
            return rescale(fit_fused(DX, Dy), np.vstack([DX, QX[qmask]]), np.r_[Dy, Qy[qmask]], {})
        kind, k = name.split(" x")
        sx, sy = np.repeat(SX[smask], int(k), axis=0), np.repeat(Sy[smask], int(k))
        if kind == "dev+ssli":
            cal = fit_fused(np.vstack([DX, sx]), np.r_[Dy, sy])
            return rescale(cal, np.vstack([DX, QX[qmask]]), np.r_[Dy, Qy[qmask]], {})
        return fit_fused(np.vstack([DX, QX[qmask], sx]), np.r_[Dy, Qy[qmask], sy])

    names = ["shipped", *(f"{kind} x{k}" for kind in ("dev+ssli", "all") for k in WEIGHTS)]
    cv: dict = {}
    for name in names:
        qp, sp = np.zeros(len(Qy)), np.zeros(len(Sy))
        for k in range(args.folds):
            qtrain, strain = qfold[Qqi] != k, sfold[Sqi] != k
            cal = variant(name, qtrain, strain)
            qp[~qtrain], sp[~strain] = (
                cal.predict_matrix(QX[~qtrain]),
                cal.predict_matrix(SX[~strain]),
            )
        whole = variant(name, np.ones(len(Qy), bool), np.ones(len(Sy), bool))
        cv[name] = {
            "dev_in_sample": per_question(
                whole.predict_matrix(DX), Dy, Dqi, Dd, range(len(data.dev))
            ),
            "ssli": per_question(sp, Sy, Sqi, Sd, range(len(ssli))),
            "questions_what_how": per_question(qp, Qy, Qqi, Qd, np.flatnonzero(~yesno)),
            "questions_yesno": per_question(qp, Qy, Qqi, Qd, np.flatnonzero(yesno)),
        }
        print(name, json.dumps(cv[name]["ssli"]), file=sys.stderr)
    ranks = -np.concatenate([np.arange(len(r.candidates)) for r in ssli])  # first stage's order
    out: dict = {
        "command": shlex.join(["python", *sys.argv]),
        "model": args.model,
        "ssli_set": args.set,
        "ssli_questions": len(ssli),
        "ssli_refused_as_seen": refused,
        "ssli_skipped": skipped,
        "questions": {"what_how": int((~yesno).sum()), "yesno": int(yesno.sum())},
        "dev_claims": len(data.dev),
        "first_stage_on_ssli": per_question(ranks, Sy, Sqi, Sd, range(len(ssli))),
        "cross_validation": cv,
    }
    if args.pick == "auto":  # decided on the cross-validation alone, before any evaluation
        args.pick = min(names[1:], key=lambda n: (*pick_key(cv[n]), names.index(n)))
    if args.pick:
        if args.pick not in names:
            raise SystemExit(f"--pick must be auto or one of {names}")
        shipped = Calibrator.load(model_dir / card["calibrators"]["fused"])
        final = variant(args.pick, np.ones(len(Qy), bool), np.ones(len(Sy), bool))
        final = replace(
            final,
            model_id=shipped.model_id,
            notes={"fitted_on": f"{args.pick}: dev claims, calibration and SSLI questions"},
        )
        out["picked"] = {"variant": args.pick, "coef": final.coef, "intercept": final.intercept}
        out["shipped_calibrator"] = {"coef": shipped.coef, "intercept": shipped.intercept}
        copy = write_copy(settings, model_dir, card, final, args.out)
        out["model_copy"] = str(copy)
    path = ROOT / "benchmarks" / "results" / "calibrator_with_ssli.json"
    path.write_text(json.dumps(out, indent=1) + "\n")


if __name__ == "__main__":
    main()
