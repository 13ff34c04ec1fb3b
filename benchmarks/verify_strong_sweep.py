"""The claim-level decision of ``verify_scifact.py`` runs at other values of ``strong`` (the
confidence an abstract's SUPPORT or CONTRADICT needs to decide the claim): refusals of
answerable claims and the precision of the decisions, per run and pooled over runs on
disjoint claims (cross-validation folds). Sensitivity, not a choice: each model's
``strong`` is chosen on its dev claims by ``sciera train verifier``.

The issue's refusal target is set on answerable claims (gold evidence in the corpus): each
row also gives the precision of the decisions on those alone (``answerable_precision``),
and ``abstracts_answerable`` gives SciFact's abstract-level label-only precision and recall
of the run's predictions on the answerable claims (the gate decides these, not ``strong``).

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

from sciera.datasets.claims import read_gold
from sciera.eval.metrics.scifact import scifact_counts
from sciera.types import AbstractVerdict
from sciera.verify.aggregate import aggregate
from verify_common import DATA, log
from verify_product_path import OUT, benchmark_rows
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


def answerable_abstracts(
    paths: list[Path], setting: str, system: str, claims: Path
) -> dict[str, Any]:
    """SciFact's abstract-level label-only scores of the runs' predictions on the claims
    with gold evidence in ``claims``, pooled over the runs and per run."""
    every = {g.id: g for g in read_gold(claims)}
    out: dict[str, Any] = {}
    pooled_golds, pooled_preds = [], []
    for path in paths:
        preds = benchmark_rows(path, setting, system)
        golds = [every[i] for i in sorted(preds) if every[i].evidence]
        pooled_golds += golds
        pooled_preds += [preds[g.id] for g in golds]
        out[path.name.removesuffix("_rows.jsonl.gz")] = _label_only(golds, preds)
    out["pooled"] = _label_only(pooled_golds, {p.id: p for p in pooled_preds})
    return out


def _label_only(golds: list, preds: dict) -> dict[str, Any]:
    counts = scifact_counts(golds, [preds[g.id] for g in golds])
    m = counts.metrics()
    return {
        "claims": len(golds),
        "predicted": counts.abstract_predicted,
        "precision": m["abstract_label_only_precision"],
        "recall": m["abstract_label_only_recall"],
    }


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--runs", nargs="+", required=True, help="verify_scifact.py result names")
    ap.add_argument("--system", default="combined")
    ap.add_argument("--setting", default="open@5")
    ap.add_argument("--grid", type=float, nargs="+", default=list(GRID))
    ap.add_argument("--name", help="result name (default: strong_sweep_<runs>)")
    ap.add_argument("--results", type=Path, default=OUT, help="where the rows are")
    ap.add_argument(
        "--claims",
        type=Path,
        default=DATA / "scifact" / "claims_train.jsonl",
        help="the runs' gold claims (SciFact format)",
    )
    args = ap.parse_args()
    paths = [args.results / f"{r}_rows.jsonl.gz" for r in args.runs]
    runs = {
        r: read_verdicts(p, args.setting, args.system)
        for r, p in zip(args.runs, paths, strict=True)
    }
    out: dict[str, Any] = {
        "command": "python benchmarks/verify_strong_sweep.py " + shlex.join(sys.argv[1:]),
        "system": args.system,
        "setting": args.setting,
        "abstracts_answerable": answerable_abstracts(paths, args.setting, args.system, args.claims),
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
            f"{pooled['decided']} decisions {pooled['precision']:.3f} precise "
            f"({pooled['answerable_precision']:.3f} on answerable claims)"
        )
    ab = out["abstracts_answerable"]["pooled"]
    log(
        f"answerable claims' abstracts: {ab['predicted']} decided, label-only precision "
        f"{ab['precision']:.3f}, recall {ab['recall']:.3f} ({ab['claims']} claims)"
    )
    name = args.name or "strong_sweep_" + "+".join(args.runs)
    path = args.results / f"{name}.json"
    path.write_text(json.dumps(out, indent=1) + "\n", encoding="utf-8")
    log(f"wrote {path}")


if __name__ == "__main__":
    main()
