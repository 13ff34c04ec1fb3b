"""Two verifier runs of ``verify_scifact.py`` on the same claims, paired: one system of each
(by default ``trained``) in each setting, SciFact's four F1s of both and the paired tests
(approximate randomization of abstract label-only and sentence selection+label F1 over
claims, exact McNemar on each gold abstract's label-only outcome). How a training option is
measured against the model trained without it, e.g. on a cross-validation fold::

    python benchmarks/verify_compare.py --a verifier-cv4_test --b verifier-cv4neg_test

Several runs on each side pool disjoint claims (cross-validation folds, the i-th of --a
paired with the i-th of --b) into one paired comparison; ``--name`` names it::

    python benchmarks/verify_compare.py --a cv2 cv3 --b cv2ng cv3ng --name folds

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


def read_rows(paths: list[Path], setting: str, system: str) -> dict:
    """The rows of several runs on disjoint claims, by claim id."""
    out: dict = {}
    for path in paths:
        rows = benchmark_rows(path, setting, system)
        if shared := set(rows) & set(out):
            raise SystemExit(f"{path}: claim {min(shared)} is in another run on this side too")
        out.update(rows)
    return out


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--a", required=True, nargs="+", help="result name(s) of the reference run")
    ap.add_argument("--b", required=True, nargs="+", help="result name(s) compared with it")
    ap.add_argument("--name", help="the comparison's name (default: compare_<a>_vs_<b>)")
    ap.add_argument("--system", default="trained")
    ap.add_argument("--settings", nargs="+", default=["oracle", "open@5"])
    ap.add_argument("--results", type=Path, default=OUT, help="where the rows are")
    args = ap.parse_args()
    if len(args.a) != len(args.b):
        raise SystemExit("--a and --b name different numbers of runs")
    if set(args.a) & set(args.b):
        raise SystemExit("--a and --b name the same run")
    a, b = "+".join(args.a), "+".join(args.b)
    sides = [
        [args.results / f"{name}_rows.jsonl.gz" for name in names] for names in (args.a, args.b)
    ]
    for path in sides[0] + sides[1]:
        if not path.is_file():
            raise SystemExit(f"{path}: no such rows file (run verify_scifact.py first)")
    every = {g.id: g for g in read_gold(DATA / "scifact" / "claims_train.jsonl")}
    out: dict[str, Any] = {
        "command": "python benchmarks/verify_compare.py " + shlex.join(sys.argv[1:]),
        "a": a,
        "b": b,
        "system": args.system,
        "results": {},
        "paired": {},
    }
    for setting in args.settings:
        rows_a, rows_b = (read_rows(paths, setting, args.system) for paths in sides)
        if set(rows_a) != set(rows_b):
            raise SystemExit(f"{a} and {b} are not on the same claims")
        golds = [every[i] for i in sorted(rows_a)]
        # compare() pairs its second argument (b here) against its third (a)
        scores, tests, differ = compare(golds, rows_b, rows_a)
        out["n_claims"] = len(golds)
        res = out["results"][setting] = {
            a: {k: round(v, 4) for k, v in scores["benchmark"].items()},
            b: {k: round(v, 4) for k, v in scores["product"].items()},
            "claims_deciding_other_abstracts": differ,
        }
        out["paired"][setting] = {f"{b}_vs_{a}": tests}
        log(
            f"{setting}: "
            + "; ".join(
                f"{w} {res[w]['abstract_label_only_f1']:.3f}/{res[w]['sentence_label_f1']:.3f}"
                for w in (a, b)
            )
            + f"; p = {tests['abstract_label_only_f1']['p_value']} / "
            f"{tests['sentence_label_f1']['p_value']}"
        )
    out_path = args.results / f"{args.name or f'compare_{a}_vs_{b}'}.json"
    out_path.write_text(json.dumps(out, indent=2) + "\n", encoding="utf-8")
    log(f"wrote {out_path}")


if __name__ == "__main__":
    main()
