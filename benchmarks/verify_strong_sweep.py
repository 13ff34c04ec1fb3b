"""The claim-level decision of ``verify_scifact.py`` runs at other values of ``strong`` (the
confidence an abstract's SUPPORT or CONTRADICT needs to decide the claim): refusals of
answerable claims and the precision of the decisions, per run and pooled over runs on
disjoint claims (cross-validation folds). Sensitivity, not a choice: each model's
``strong`` is chosen on its dev claims by ``sciera train verifier``.

Run from the repository root with the venv active (no model runs)::

    python benchmarks/verify_strong_sweep.py --runs verifier-cv2ng_test_llm verifier-cv3ng_test_llm

Reads the ``verdicts`` that ``verify_scifact.py`` keeps in
``benchmarks/results/verify_scifact/<run>_rows.jsonl.gz`` (runs from before it kept them
are refused with a message); writes ``benchmarks/results/verify_scifact/<name>.json``.
"""

from __future__ import annotations

import argparse
import gzip
import json
import shlex
import sys
from pathlib import Path
from typing import Any

from sciera.types import AbstractVerdict
from sciera.verify.aggregate import aggregate
from verify_common import log
from verify_product_path import OUT
from verify_scifact import claim_summary

GRID = (0.0, 0.2, 0.3, 0.35, 0.4, 0.45, 0.5, 0.55, 0.6, 0.7, 0.8)


def read_verdicts(path: Path, setting: str, system: str) -> list[tuple[str, list]]:
    """(gold label, [[doc, label, confidence], ...]) per claim of one run."""
    out = []
    with gzip.open(path, "rt", encoding="utf-8") as fh:
        for n, line in enumerate(fh, 1):
            row = json.loads(line)
            try:
                out.append((row["gold"], row["verdicts"][setting][system]))
            except KeyError:
                raise SystemExit(
                    f"{path}: row {n} keeps no {system} verdicts at {setting} "
                    "(rerun verify_scifact.py)"
                ) from None
    return out


def levels(claims: list[tuple[str, list]], strong: float) -> list[dict[str, str]]:
    rows = []
    for gold, verdicts in claims:
        abstracts = [
            AbstractVerdict(doc, "", label, conf, (0.0, 0.0, 0.0)) for doc, label, conf in verdicts
        ]
        rows.append({"gold": gold, "label": aggregate("", abstracts, strong).label})
    return rows


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--runs", nargs="+", required=True, help="verify_scifact.py result names")
    ap.add_argument("--system", default="combined")
    ap.add_argument("--setting", default="open@5")
    ap.add_argument("--grid", type=float, nargs="+", default=list(GRID))
    ap.add_argument("--name", help="result name (default: strong_sweep_<runs>)")
    ap.add_argument("--results", type=Path, default=OUT, help="where the rows are")
    args = ap.parse_args()
    runs = {
        r: read_verdicts(args.results / f"{r}_rows.jsonl.gz", args.setting, args.system)
        for r in args.runs
    }
    out: dict[str, Any] = {
        "command": "python benchmarks/verify_strong_sweep.py " + shlex.join(sys.argv[1:]),
        "system": args.system,
        "setting": args.setting,
        "runs": {},
        "pooled": {},
    }
    for strong in args.grid:
        key = f"{strong:g}"
        per_run = {name: levels(claims, strong) for name, claims in runs.items()}
        for name, rows in per_run.items():
            out["runs"].setdefault(name, {})[key] = claim_summary(rows)
        pooled = out["pooled"][key] = claim_summary([r for rows in per_run.values() for r in rows])
        log(
            f"strong {key}: refused {pooled['refusal_rate']:.3f} of {pooled['answerable']}, "
            f"{pooled['decided']} decisions {pooled['precision']:.3f} precise"
        )
    name = args.name or "strong_sweep_" + "+".join(args.runs)
    path = args.results / f"{name}.json"
    path.write_text(json.dumps(out, indent=1) + "\n", encoding="utf-8")
    log(f"wrote {path}")


if __name__ == "__main__":
    main()
