"""Two verifier runs of ``verify_scifact.py`` on the same claims, paired: one system of each
(by default ``trained``) in each setting, SciFact's four F1s of both and the paired tests
(approximate randomization of abstract label-only and sentence selection+label F1 over
claims, exact McNemar on each gold abstract's label-only outcome). How a training option is
measured against the model trained without it, e.g. on a cross-validation fold::

    python benchmarks/verify_compare.py --a verifier-cv4_test --b verifier-cv4neg_test

Reads ``benchmarks/results/verify_scifact/<name>_rows.jsonl.gz`` (the per-claim predictions
``verify_scifact.py`` writes) and the gold claims; writes
``benchmarks/results/verify_scifact/compare_<a>_vs_<b>.json``.
"""

from __future__ import annotations

import argparse
import json
import shlex
import sys
from pathlib import Path
from typing import Any

from sciera.datasets.claims import read_gold
from verify_common import DATA, log
from verify_product_path import OUT, benchmark_rows, compare


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--a", required=True, help="result name of the reference run")
    ap.add_argument("--b", required=True, help="result name of the run compared with it")
    ap.add_argument("--system", default="trained")
    ap.add_argument("--settings", nargs="+", default=["oracle", "open@5"])
    ap.add_argument("--results", type=Path, default=OUT, help="where the rows are")
    args = ap.parse_args()
    if args.a == args.b:
        raise SystemExit("--a and --b name the same run")
    paths = [args.results / f"{name}_rows.jsonl.gz" for name in (args.a, args.b)]
    for path in paths:
        if not path.is_file():
            raise SystemExit(f"{path}: no such rows file (run verify_scifact.py first)")
    every = {g.id: g for g in read_gold(DATA / "scifact" / "claims_train.jsonl")}
    out: dict[str, Any] = {
        "command": "python benchmarks/verify_compare.py " + shlex.join(sys.argv[1:]),
        "a": args.a,
        "b": args.b,
        "system": args.system,
        "results": {},
        "paired": {},
    }
    for setting in args.settings:
        rows_a, rows_b = (benchmark_rows(p, setting, args.system) for p in paths)
        if set(rows_a) != set(rows_b):
            raise SystemExit(f"{args.a} and {args.b} are not on the same claims")
        golds = [every[i] for i in sorted(rows_a)]
        # compare() pairs its second argument (b here) against its third (a)
        scores, tests, differ = compare(golds, rows_b, rows_a)
        out["n_claims"] = len(golds)
        res = out["results"][setting] = {
            args.a: {k: round(v, 4) for k, v in scores["benchmark"].items()},
            args.b: {k: round(v, 4) for k, v in scores["product"].items()},
            "claims_deciding_other_abstracts": differ,
        }
        out["paired"][setting] = {f"{args.b}_vs_{args.a}": tests}
        log(
            f"{setting}: "
            + "; ".join(
                f"{w} {res[w]['abstract_label_only_f1']:.3f}/{res[w]['sentence_label_f1']:.3f}"
                for w in (args.a, args.b)
            )
            + f"; p = {tests['abstract_label_only_f1']['p_value']} / "
            f"{tests['sentence_label_f1']['p_value']}"
        )
    out_path = args.results / f"compare_{args.a}_vs_{args.b}.json"
    out_path.write_text(json.dumps(out, indent=2) + "\n", encoding="utf-8")
    log(f"wrote {out_path}")


if __name__ == "__main__":
    main()
