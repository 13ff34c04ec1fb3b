"""CDR question by question, paired between two pipelines of an SSLI results directory.

`sciera eval report` pools CDR over (gold, distractor) pairs and so leaves it out of its
paired tests. This script scores each SSLI question with distractors by the share of its
distractors ranked below its best gold passage, and pairs two pipelines on those scores
(Fisher's paired randomization test). Run from the repository root with the venv active::

    python benchmarks/cdr_paired.py benchmarks/results/ssli_scifact_ssli2 shipped ce_ssli2_full

Writes ``RESULTS/report/cdr_paired_<a>_<b>.json``.
"""

from __future__ import annotations

import argparse
import json
from pathlib import Path

from sciera.eval.runstore import Results, final_run, load_results
from sciera.eval.significance import paired_randomization


def per_question_cdr(results: Results, pipeline: str, repeat: int = 0) -> dict[str, float]:
    """{qid: share of the question's distractors ranked below its best gold passage}."""
    qrels, distractors = results.dataset["qrels"], results.dataset["distractors"]
    out = {}
    for rec in results.records[pipeline][repeat].values():
        qid = rec["qid"]
        if rec.get("setting") != "ssli" or not distractors.get(qid):
            continue
        run = final_run({qid: rec})[qid]
        low = float("-inf")
        gold = max(run.get(g, low) for g, grade in qrels[qid].items() if grade > 0)
        out[qid] = sum(gold > run.get(d, low) for d in distractors[qid]) / len(distractors[qid])
    return out


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("results", type=Path)
    ap.add_argument("a", help="baseline pipeline")
    ap.add_argument("b", help="pipeline compared with it")
    args = ap.parse_args()
    results = load_results(args.results)
    a, b = per_question_cdr(results, args.a), per_question_cdr(results, args.b)
    qids = sorted(set(a) & set(b))
    test = paired_randomization([a[q] for q in qids], [b[q] for q in qids])
    report = {
        "results": str(args.results),
        "questions": len(qids),
        "mean": {
            args.a: sum(a[q] for q in qids) / len(qids),
            args.b: sum(b[q] for q in qids) / len(qids),
        },
        "higher": sum(b[q] > a[q] for q in qids),
        "lower": sum(b[q] < a[q] for q in qids),
        "test": {"name": test.test, "mean_diff": test.mean_diff, "p_value": test.p_value},
    }
    path = args.results / "report" / f"cdr_paired_{args.a}_{args.b}.json"
    path.write_text(json.dumps(report, indent=2) + "\n", encoding="utf-8")
    print(json.dumps(report, indent=2))


if __name__ == "__main__":
    main()
