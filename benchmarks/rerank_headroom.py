"""Is DeepEra's tie with the first stage the calibrator's fault or the judge's? (issue 4)

    python benchmarks/rerank_headroom.py \
        --rows benchmarks/results/rerank_scifact_d10/rerank_scifact_rows_s7_n100_d10.jsonl

Reads the traces of an unfiltered DeepEra run of ``rerank_scifact.py`` (every candidate
graded: first-stage rank and score, the LLM's E[grade]/10 and the shipped calibrator's
score) and ranks each claim's candidates by
- the first stage, the raw grade, the shipped calibrated score (what the run reported),
- reciprocal rank fusion (k=60) of first-stage rank and grade rank (nothing fitted), and
- a **diagnostic ceiling**: logistic calibrators fitted on these test claims themselves,
  out-of-fold by claim (rerank_calibrate.out_of_fold), on first-stage features with and
  without the grade and the grade's place within its claim (grade minus the claim's best
  and mean grade). They see test labels, so they are not results; they bound what any
  calibrator over these features could do. If the grade cannot lift even them above the
  first stage, more calibration data cannot help and only a better judge can.
nDCG@10, HitRate@1 and HitRate@3 against the test qrels (sciera.eval.metrics.evaluate).
Writes benchmarks/results/rerank_headroom.json. No LLM.
"""

from __future__ import annotations

import argparse
import json
import sys
from pathlib import Path

import numpy as np

sys.path.insert(0, str(Path(__file__).resolve().parent))
from rerank_calibrate import DATA, RESULTS, out_of_fold

METRICS = ("ndcg@10", "hit@1", "hit@3")
CEILINGS = {
    "first stage only": ("first_stage_norm", "reciprocal_rank"),
    "grade + first stage": ("grade", "first_stage_norm", "reciprocal_rank"),
    "grade, its place in the claim + first stage": (
        "grade",
        "grade_minus_best",
        "grade_minus_mean",
        "first_stage_norm",
        "reciprocal_rank",
    ),
}


def records_from_traces(path: Path, reranker: str, qrels: dict) -> list[dict]:
    """One record per claim in rerank_calibrate's form: ``{qid, rows: [features, label]}``,
    candidates in first-stage order."""
    from sciera.eval.resultlog import read_text

    records = []
    for line in read_text(path).splitlines():  # the plain file or its packed .gz
        rec = json.loads(line)
        if rec["reranker"] != reranker or rec.get("error"):
            continue
        ps = sorted(rec["trace"]["passages"], key=lambda p: p["first_stage_rank"])
        fs = [p["first_stage_score"] for p in ps]
        grades = [p["grade_expectation"] for p in ps]
        lo, span = min(fs), (max(fs) - min(fs)) or 1.0
        rows = [
            {
                "doc": p["passage_id"].partition("#")[0],
                "label": int(p["passage_id"].partition("#")[0] in qrels[rec["qid"]]),
                "grade": p["grade_expectation"],
                "calibrated": p["calibrated"],
                "first_stage_norm": (p["first_stage_score"] - lo) / span,
                "reciprocal_rank": 1.0 / p["first_stage_rank"],
                "grade_minus_best": p["grade_expectation"] - max(grades),
                "grade_minus_mean": p["grade_expectation"] - float(np.mean(grades)),
            }
            for p in ps
        ]
        records.append({"qid": rec["qid"], "rows": rows})
    return records


def ranked_scores(records: list[dict], score: np.ndarray, qrels: dict) -> dict[str, float]:
    """Metrics of each claim's candidates sorted by ``score`` (ties keep first-stage order)."""
    from sciera.eval.metrics.evaluate import evaluate

    run, start = {}, 0
    for r in records:
        s = score[start : start + len(r["rows"])]
        start += len(r["rows"])
        order = sorted(range(len(s)), key=lambda i: (-s[i], i))
        run[r["qid"]] = [r["rows"][i]["doc"] for i in order]
    n = {r["qid"]: len(r["rows"]) for r in records}
    res = evaluate(run, {q: qrels[q] for q in run}, METRICS, n_candidates=n)
    return {m: round(v, 4) for m, v in res.items()}


def rrf_of_grade(records: list[dict], k: int = 60) -> np.ndarray:
    """RRF of the first-stage rank (the rows' order) and the grade's rank in its claim."""
    out = []
    for r in records:
        grades = [row["grade"] for row in r["rows"]]
        by_grade = sorted(range(len(grades)), key=lambda i: -grades[i])
        grade_rank = {i: rank for rank, i in enumerate(by_grade, 1)}
        out += [1 / (k + i + 1) + 1 / (k + grade_rank[i]) for i in range(len(grades))]
    return np.array(out)


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawTextHelpFormatter)
    ap.add_argument("--rows", type=Path, required=True, help="rerank_scifact.py rows file")
    ap.add_argument("--reranker", default="deepera_nofilter", help="an unfiltered DeepEra run")
    ap.add_argument("--folds", type=int, default=5)
    args = ap.parse_args()

    from sciera.corpus import load_qrels

    qrels = load_qrels(DATA / "qrels" / "test.tsv")
    records = records_from_traces(args.rows, args.reranker, qrels)
    if not records:
        sys.exit(f"{args.rows}: no {args.reranker} rows")

    def column(name: str) -> np.ndarray:
        return np.array([row[name] for r in records for row in r["rows"]], dtype=float)

    n = len(column("grade"))
    report = {
        "command": "python benchmarks/rerank_headroom.py " + " ".join(sys.argv[1:]),
        "rows": str(args.rows),
        "reranker": args.reranker,
        "claims": len(records),
        "candidates": n,
        "relevant": int(column("label").sum()),
        "rankings": {
            "first stage": ranked_scores(records, np.zeros(n), qrels),
            "raw grade": ranked_scores(records, column("grade"), qrels),
            "shipped calibrator (the run)": ranked_scores(records, column("calibrated"), qrels),
            "RRF of first-stage and grade ranks": ranked_scores(
                records, rrf_of_grade(records), qrels
            ),
        },
        "diagnostic_ceiling_fitted_on_these_test_claims": {
            name: ranked_scores(
                records, out_of_fold(records, feats, folds=args.folds, l2=1.0), qrels
            )
            for name, feats in CEILINGS.items()
        },
    }
    out = RESULTS / "rerank_headroom.json"
    out.write_text(json.dumps(report, indent=2) + "\n")
    print(json.dumps(report, indent=2))
    print(f"wrote {out}", file=sys.stderr)


if __name__ == "__main__":
    main()
