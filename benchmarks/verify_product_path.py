"""The verifier's dev claims as a user runs them: ``sciera verify --claims`` predictions
scored with SciFact's metrics, paired with ``verify_scifact.py``'s open-setting rows.

Run from the repository root with the venv active (no network needed)::

    python benchmarks/verify_product_path.py --write-claims /tmp/dev_claims.jsonl
    sciera verify --claims /tmp/dev_claims.jsonl --corpus CORPUS --out PRED.jsonl
    python benchmarks/verify_product_path.py --pred PRED.jsonl --name NAME

``--versus OTHER.jsonl`` pairs the predictions with another ``sciera verify --claims`` run
on the same claims (say, over a corpus ingested otherwise) instead of those rows.

``--write-claims`` writes the model card's dev claims (``id`` and ``claim`` only, never
their labels). ``PRED.jsonl`` is the prediction file of the product's own path: retrieval,
DeepEra and the verify stage over the top 5 abstracts, the sentences the corpus stores.
``verify_scifact.py`` reads SciFact's sentence lists and scores relevance its own way (the
first stage's documents, Max-P, reranked by the cross-encoder, fused), so the two can
differ; this script says by how much, on the same claims: SciFact's four scores of both,
each claim's (correct, predicted, gold) counts paired by approximate randomization of
abstract label-only and sentence selection+label F1, exact McNemar on each gold
abstract's label, and how many claims differ in the abstracts they decide. Writes
``benchmarks/results/verify_scifact/<name>.json``.
"""

from __future__ import annotations

import argparse
import gzip
import json
import shlex
import sys
from pathlib import Path

from sciera.datasets.claims import parse_prediction, read_gold, read_predictions
from sciera.eval.metrics.scifact import claim_counts, scifact_counts
from sciera.eval.significance import mcnemar_exact
from sciera.settings import load_settings
from sciera.types import NOT_ENOUGH_INFO
from sciera.verify.network import read_card, resolve_model
from verify_common import DATA as SHARED
from verify_common import ROOT, f1_randomization
from verify_scifact import PAIRED, gold_abstract_outcomes

DATA = SHARED / "scifact"
OUT = ROOT / "benchmarks" / "results" / "verify_scifact"


def dev_ids(model: str) -> list[str]:
    card = read_card(resolve_model(model, load_settings().home))
    return [str(c) for c in card["data"]["dev_ids"]]


def predictions(path: Path) -> list:
    """SciFact predictions from JSONL, gzipped or not (the kept copies are gzipped)."""
    if path.suffix != ".gz":
        return read_predictions(path)
    with gzip.open(path, "rt", encoding="utf-8") as fh:
        return [
            parse_prediction(json.loads(x), str(path), n) for n, x in enumerate(fh, 1) if x.strip()
        ]


def benchmark_rows(path: Path, setting: str, system: str) -> dict:
    """``verify_scifact.py``'s predictions of ``system`` in ``setting``, by claim id."""
    out = {}
    with gzip.open(path, "rt", encoding="utf-8") as fh:
        for n, line in enumerate(fh, 1):
            row = json.loads(line)
            rec = {"id": row["id"], "evidence": row[setting][system]}
            out[row["id"]] = parse_prediction(rec, str(path), n)
    return out


def decided(evidence: dict) -> dict[str, str]:
    return {d: a.label for d, a in evidence.items() if a.label != NOT_ENOUGH_INFO}


def compare(golds: list, product: dict, bench: dict) -> tuple[dict, dict, int]:
    """SciFact's scores of both, the paired tests (product against benchmark) and how many
    claims decide other abstracts."""
    systems = {"product": product, "benchmark": bench}
    scores = {
        k: scifact_counts(golds, [v[g.id] for g in golds]).metrics() for k, v in systems.items()
    }
    tests = {}
    for level in PAIRED:
        per = [
            [
                (s.correct, s.predicted, s.gold)
                for s in (claim_counts(g, systems[w][g.id]).score(level) for g in golds)
            ]
            for w in ("benchmark", "product")
        ]
        tests[f"{level}_f1"] = f1_randomization(per[0], per[1])
    tests["gold_abstract_label"] = mcnemar_exact(
        gold_abstract_outcomes(golds, bench), gold_abstract_outcomes(golds, product)
    ).as_dict()
    differ = sum(decided(product[g.id].evidence) != decided(bench[g.id].evidence) for g in golds)
    return scores, tests, differ


def dev_predictions(path: Path, golds: list) -> dict:
    """``sciera verify --claims`` predictions by claim id; a one-line exit when a dev claim
    has none."""
    preds = {p.id: p for p in predictions(path)}
    if missing := [g.id for g in golds if g.id not in preds]:
        sys.exit(f"{path}: no prediction for {len(missing)} dev claims (first {missing[0]})")
    return preds


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--model", default="scifact-verifier")
    ap.add_argument("--write-claims", type=Path, help="write the dev claims and stop")
    ap.add_argument("--pred", type=Path, help="sciera verify --claims output")
    ap.add_argument("--name", help="result name")
    ap.add_argument("--rows", type=Path, default=OUT / "scifact-verifier_dev_llm_rows.jsonl.gz")
    ap.add_argument("--system", default="combined", help="verify_scifact.py's system")
    ap.add_argument("--setting", default="open@5")
    ap.add_argument(
        "--versus",
        type=Path,
        help="pair with another sciera verify --claims output (e.g. over a corpus ingested "
        "otherwise) instead of verify_scifact.py's rows",
    )
    args = ap.parse_args()
    ids = set(dev_ids(args.model))
    golds = [g for g in read_gold(DATA / "claims_train.jsonl") if g.id in ids]
    if args.write_claims:
        with args.write_claims.open("w", encoding="utf-8") as fh:
            for g in golds:
                fh.write(json.dumps({"id": g.id, "claim": g.claim}) + "\n")
        print(f"{len(golds)} dev claims -> {args.write_claims}")
        return
    if args.pred is None or args.name is None:
        sys.exit("--pred and --name are needed (or --write-claims)")
    product = dev_predictions(args.pred, golds)
    if args.versus:
        bench = dev_predictions(args.versus, golds)
        against = str(args.versus)
    else:
        bench = benchmark_rows(args.rows, args.setting, args.system)
        against = f"{args.rows.name}: {args.setting} {args.system}"
    scores, tests, differ = compare(golds, product, bench)
    out = {
        "command": "python " + shlex.join(sys.argv),
        "model": args.model,
        "claims": len(golds),
        "predictions": str(args.pred),
        "benchmark": against,
        "scores": {k: {m: round(x, 4) for m, x in v.items()} for k, v in scores.items()},
        "paired_product_vs_benchmark": tests,
        "claims_deciding_other_abstracts": differ,
    }
    OUT.mkdir(parents=True, exist_ok=True)
    path = OUT / f"{args.name}.json"
    path.write_text(json.dumps(out, indent=1) + "\n", encoding="utf-8")
    for k, v in out["scores"].items():
        a, p = v["abstract_label_only_f1"], v["abstract_label_only_precision"]
        print(f"{k}: abstract {a:.3f} (P {p:.3f}) sentence {v['sentence_label_f1']:.3f}")
    print(json.dumps(tests), f"claims deciding other abstracts: {differ}", f"-> {path}")


if __name__ == "__main__":
    main()
