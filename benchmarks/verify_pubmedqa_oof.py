"""The question combiner fitted on out-of-fold rows, against the shipped one.

Run from the repository root with the venv active, after ``verify_pubmedqa.py --llm`` for
the shipped model and for each cross-validation model (``sciera train verifier --cv-fold K``,
which holds out claims fold K and PubMedQA fold K)::

    python benchmarks/verify_pubmedqa_oof.py --folds verifier-cv1 verifier-cv2 ...

The shipped question combiner is fitted on the shipped model's own training questions, where
its verdict head is in-sample (it trained on them), so the combiner trusts the head more than
held-out questions bear out. A fold model's head is out of fold on its held-out PubMedQA
fold; pooled over the folds the shipped model trained on (1 to 4), those rows are what a
combiner of the head and the 1.5B should be fitted on.

- Training questions (what a choice may read): each fold's rows answered by a combiner
  fitted on the other folds' rows (nested by fold), against the shipped combiner on the
  same rows (which was fitted with 243 of these 400 questions' labels: it is favoured).
- The shipped model's held-out questions (PubMedQA fold 0; measured, never chosen on): the
  combiner fitted on all pooled rows over the shipped model's head and the 1.5B
  (``scifact-verifier_llm_rows``), against the shipped combiner, reasoning setting and
  BioASQ-format proxy.

- Cross-validation (``cross_validation``): each model's answers on its own held-out fold
  (the shipped model's on fold 0, each fold model's on fold K), pooled over the folds given:
  the verdict head, the 1.5B and their combination cross-fitted within the fold's questions
  (as ``verify_pubmedqa.py`` answers them), against always the training majority, paired.

Accuracy and macro-F1, paired by the exact McNemar test per question. Writes
``benchmarks/results/verify_pubmedqa/oof_combiner.json`` (with ``--save PATH``, also the
pooled combiner in the model folder's format).
"""

from __future__ import annotations

import argparse
import json
import shlex
import sys
from pathlib import Path

import numpy as np

from sciera.eval.resultlog import open_text
from sciera.eval.significance import mcnemar_exact
from sciera.verify.calibration import LogisticCombiner, load, save
from verify_common import ROOT, log
from verify_pubmedqa import NAMES, scores

RESULTS = ROOT / "benchmarks" / "results" / "verify_pubmedqa"
INPUTS = ("trained", "llm")
CV_SYSTEMS = ("always_majority", "trained", "llm", "combined")
"""The answers of ``verify_pubmedqa.py`` the cross-validation block pools."""


def read_rows(path: Path) -> list[dict]:
    """One model's per-question rows; exits with one line when they lack the 1.5B's."""
    with open_text(path) as fh:
        rows = [json.loads(x) for x in fh if x.strip()]
    if not rows or "p_llm" not in rows[0]:
        raise SystemExit(f"{path}: no p_llm in its rows (run verify_pubmedqa.py --llm)")
    return rows


def arrays(rows: list[dict], prefix: str) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """(trained, 1.5B, gold label) over the rows that have ``prefix`` probabilities (``p``:
    the reasoning inputs; ``b``: the yes/no snippets)."""
    have = [r for r in rows if f"{prefix}_llm" in r]
    a = np.array([r[f"{prefix}_trained"] for r in have], dtype=float).reshape(-1, 3)
    b = np.array([r[f"{prefix}_llm"] for r in have], dtype=float).reshape(-1, 3)
    y = np.array([NAMES.index(r["gold"]) for r in have], dtype=int)
    return a, b, y


def predict(comb: LogisticCombiner, a: np.ndarray, b: np.ndarray, yes_no: bool) -> np.ndarray:
    p = comb(a, b)
    return (p[:, :2] if yes_no else p).argmax(1)


def fit(folds: list[tuple[np.ndarray, np.ndarray, np.ndarray]]) -> LogisticCombiner:
    a, b, y = (np.concatenate(x) for x in zip(*folds, strict=True))
    return LogisticCombiner.fit([a, b], y, INPUTS)


def compare(y: np.ndarray, shipped: np.ndarray, pooled: np.ndarray, labels: list[int]) -> dict:
    return {
        "shipped": scores(shipped, y, labels),
        "out_of_fold": scores(pooled, y, labels),
        "paired_out_of_fold_vs_shipped": mcnemar_exact(shipped == y, pooled == y).as_dict(),
    }


def nested(folds: list, shipped: LogisticCombiner) -> dict:
    """Each fold's rows by a combiner fitted on the other folds, and by the shipped one."""
    ys, ship, mine = [], [], []
    for k, (a, b, y) in enumerate(folds):
        others = [f for j, f in enumerate(folds) if j != k]
        ys.append(y)
        ship.append(predict(shipped, a, b, False))
        mine.append(predict(fit(others), a, b, False))
    y = np.concatenate(ys)
    return compare(y, np.concatenate(ship), np.concatenate(mine), [0, 1, 2])


def cross_validation(rows: list[dict]) -> dict:
    """The per-question answers of ``verify_pubmedqa.py`` pooled over held-out folds."""
    y = np.array([NAMES.index(r["gold"]) for r in rows])
    pred = {s: np.array([NAMES.index(r["reasoning"][s]) for r in rows]) for s in CV_SYSTEMS}
    out: dict = {s: scores(pred[s], y, [0, 1, 2]) for s in CV_SYSTEMS}
    out["paired_combined_vs_always_majority"] = mcnemar_exact(
        pred["combined"] == y, pred["always_majority"] == y
    ).as_dict()
    return out


def main() -> None:
    ap = argparse.ArgumentParser(
        description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter
    )
    ap.add_argument("--folds", nargs="+", required=True, help="cross-validation model names")
    ap.add_argument("--shipped", default="scifact-verifier")
    ap.add_argument("--save", type=Path, help="also write the pooled combiner here")
    args = ap.parse_args()
    from sciera.settings import load_settings
    from sciera.verify.llm_verdict import COMBINER_FILES
    from sciera.verify.network import resolve_model

    settings = load_settings()
    shipped = load(Path(resolve_model(args.shipped, settings.home)) / COMBINER_FILES["question"])
    fold_rows = {m: read_rows(RESULTS / f"{Path(m).name}_llm_rows.jsonl.gz") for m in args.folds}
    held = read_rows(RESULTS / f"{args.shipped}_llm_rows.jsonl.gz")
    overlap = {r["id"] for r in held} & {r["id"] for rs in fold_rows.values() for r in rs}
    if overlap:
        sys.exit(f"{len(overlap)} of the shipped model's held-out questions are in a fold's rows")
    folds = [arrays(rows, "p") for rows in fold_rows.values()]
    pooled = fit(folds)
    out: dict = {
        "command": "python " + shlex.join(sys.argv),
        "folds": {m: len(rows) for m, rows in fold_rows.items()},
        "pooled_rows": {NAMES[k]: int(sum((y == k).sum() for _, _, y in folds)) for k in range(3)},
        "training_questions_nested_by_fold": nested(folds, shipped) if len(folds) > 1 else None,
    }
    held_out = {}
    for setting, prefix, yes_no in (("reasoning", "p", False), ("bioasq_proxy", "b", True)):
        a, b, y = arrays(held, prefix)
        labels = [0, 1] if yes_no else [0, 1, 2]
        held_out[setting] = compare(
            y, predict(shipped, a, b, yes_no), predict(pooled, a, b, yes_no), labels
        )
    out["held_out_questions"] = held_out
    out["cross_validation"] = cross_validation(held + [r for rs in fold_rows.values() for r in rs])
    if args.save:
        save(pooled, args.save)
        out["saved"] = str(args.save)
    RESULTS.mkdir(parents=True, exist_ok=True)
    path = RESULTS / "oof_combiner.json"
    path.write_text(json.dumps(out, indent=1) + "\n", encoding="utf-8")
    log(json.dumps({k: out[k] for k in ("folds", "pooled_rows")}))
    for name, block in (
        ("training (nested)", out["training_questions_nested_by_fold"]),
        *held_out.items(),
    ):
        if block:
            s, o = block["shipped"], block["out_of_fold"]
            p = block["paired_out_of_fold_vs_shipped"]["p_value"]
            log(
                f"{name}: shipped {s['accuracy']:.3f} / {s['macro_f1']:.3f}, "
                f"out of fold {o['accuracy']:.3f} / {o['macro_f1']:.3f} (p = {p:.3g})"
            )
    cv = out["cross_validation"]
    p_cv = cv["paired_combined_vs_always_majority"]["p_value"]
    log(
        f"cross-validation ({cv['combined']['n']} questions): "
        + ", ".join(f"{s} {cv[s]['accuracy']:.3f} / {cv[s]['macro_f1']:.3f}" for s in CV_SYSTEMS)
        + f" (combined vs always majority p = {p_cv:.3g})"
    )
    log(f"-> {path}")


if __name__ == "__main__":
    main()
