"""DeepEra ablations v1/v2/v3 and the tau sweep on SciFact TRAIN, from scored rows (no LLM).

    python benchmarks/rerank_calibrate.py --claims 18 --depth 10 --seed 13             # rows
    python benchmarks/rerank_calibrate.py --claims 18 --depth 10 --seed 13 --no-intent # v1 rows
    python benchmarks/rerank_ablation.py --claims 18 --depth 10 --seed 13

The paper's switches (section 4.4.1), on the claims both rows files have scored:
- full: intent-conditioned grades, calibrated, kept = score >= tau, at most top_k (5).
- v1 (use_intent=False): the grades made without the intent, with their own calibrator.
- v2 (use_filter=False): no tau; the top_k highest-scoring passages are kept.
- v3 (use_summary=False): summaries are written for kept passages only, after filtering,
  so the kept set is the full variant's by construction; v3 changes the answer's input,
  not which passages are kept (its cost is rerank_scifact.py's ``seconds_without_summary``).
Calibrated scores are out-of-fold by claim (rerank_calibrate.out_of_fold), fitted on the
same paired claims for both intent settings. Kept passages are scored against the train
qrels: precision, recall of the gold among the candidates, and HitRate@1 of the kept list
(an empty list is a miss). The first stage's top_k is the reference.
Writes benchmarks/results/rerank_ablation.json.
"""

from __future__ import annotations

import argparse
import json
import sys
from pathlib import Path

import numpy as np

sys.path.insert(0, str(Path(__file__).resolve().parent))
from rerank_calibrate import FEATURE_SETS, RESULTS, TAUS, out_of_fold

SHIPPED = "grade+p_yes+first_stage"


def kept_lists(records: list[dict], scores: np.ndarray, tau: float | None, top_k: int) -> list:
    """Per claim, the candidate indices DeepEra keeps, best first: its own filter
    (score >= tau, at most top_k; tau None = ablation v2, top_k only)."""
    from sciera.filter import filter_evidence

    out, start = [], 0
    for r in records:
        s = scores[start : start + len(r["rows"])]
        start += len(r["rows"])
        decisions = filter_evidence(s, tau=tau, top_k=top_k)
        out.append([d.index for d in decisions if d.kept])
    return out


def kept_stats(records: list[dict], kept: list[list[int]]) -> dict[str, float]:
    labels = [[row["label"] for row in r["rows"]] for r in records]
    n_kept = sum(len(k) for k in kept)
    tp = sum(lab[i] for lab, k in zip(labels, kept, strict=True) for i in k)
    gold = sum(sum(lab) for lab in labels)
    hits = [bool(k) and lab[k[0]] == 1 for lab, k in zip(labels, kept, strict=True)]
    return {
        "kept_per_claim": round(n_kept / len(records), 3),
        "precision": round(tp / n_kept, 3) if n_kept else 0.0,
        "recall_of_candidate_gold": round(tp / gold, 3) if gold else 0.0,
        "hit@1_of_kept": round(float(np.mean(hits)), 3),
        "claims_with_nothing_kept": sum(not k for k in kept),
    }


def load_rows(path: Path) -> dict[str, dict]:
    from sciera.eval.resultlog import open_text

    with open_text(path) as fh:  # the plain file or its packed .gz
        return {r["qid"]: r for r in map(json.loads, fh)}


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawTextHelpFormatter)
    ap.add_argument("--claims", type=int, default=18)
    ap.add_argument("--depth", type=int, default=10)
    ap.add_argument("--seed", type=int, default=13)
    ap.add_argument("--tau", type=float, default=0.8)
    ap.add_argument("--top-k", type=int, default=5)
    ap.add_argument("--folds", type=int, default=5)
    ap.add_argument("--l2", type=float, default=1.0)
    args = ap.parse_args()

    tag = f"s{args.seed}_n{args.claims}_d{args.depth}"
    with_intent = load_rows(RESULTS / f"rerank_calibrate_rows_{tag}.jsonl")
    without = load_rows(RESULTS / f"rerank_calibrate_rows_{tag}_nointent.jsonl")
    qids = [q for q in with_intent if q in without]
    if not qids:
        raise SystemExit(f"no claim is scored in both rows files of {tag}")
    recs = {"intent": [with_intent[q] for q in qids], "no_intent": [without[q] for q in qids]}
    for q in qids:  # the same candidates in the same order, or the pairing means nothing
        if [x["doc"] for x in with_intent[q]["rows"]] != [x["doc"] for x in without[q]["rows"]]:
            raise SystemExit(f"claim {q}: the two rows files hold different candidates")
    feats = FEATURE_SETS[SHIPPED]
    oof = {k: out_of_fold(v, feats, folds=args.folds, l2=args.l2) for k, v in recs.items()}
    raw = np.array([row["grade"] for r in recs["intent"] for row in r["rows"]])
    first = np.array([-i for r in recs["intent"] for i in range(len(r["rows"]))], dtype=float)
    tau, k = args.tau, args.top_k
    variants = {
        "full (intent, filter, summary)": (recs["intent"], oof["intent"], tau),
        "v1: no intent": (recs["no_intent"], oof["no_intent"], tau),
        "v2: no filter (top_k by score)": (recs["intent"], oof["intent"], None),
        "v3: no summary (kept set = full's)": (recs["intent"], oof["intent"], tau),
        "full, uncalibrated raw grade (no calibrator)": (recs["intent"], raw, tau),
        "first stage top_k (no reranker)": (recs["intent"], first, None),
    }
    report = {
        "command": "python benchmarks/rerank_ablation.py " + " ".join(sys.argv[1:]),
        "split": "SciFact train (qrels/train.tsv)",
        "claims_paired": len(qids),
        "candidates_per_claim": args.depth,
        "gold_among_candidates": int(sum(x["label"] for r in recs["intent"] for x in r["rows"])),
        "tau": tau,
        "top_k": k,
        "calibrator_features": list(feats),
        "variants": {
            name: kept_stats(r, kept_lists(r, s, t, k)) for name, (r, s, t) in variants.items()
        },
        "tau_sweep": {
            name: {f"{t:.1f}": kept_stats(r, kept_lists(r, s, t, k)) for t in TAUS}
            for name, (r, s, _) in list(variants.items())[:2]
        },
        "seconds_per_claim": {
            key: round(float(np.mean([r["seconds"] for r in v])), 1) for key, v in recs.items()
        },
    }
    out = RESULTS / "rerank_ablation.json"
    out.write_text(json.dumps(report, indent=2) + "\n")
    print(json.dumps(report["variants"], indent=1))


if __name__ == "__main__":
    main()
