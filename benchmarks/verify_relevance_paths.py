"""Which abstracts the verify stage reads for the dev claims, and the P(relevant) its gate
sees, on the product's path against the benchmark's.

Run from the repository root with the venv active (no network needed)::

    python benchmarks/verify_relevance_paths.py --corpus corpora/scifact-sentences

The product's path is ``sciera verify``'s: the pipeline's retrieval, DeepEra with the
cross-encoder scorer and the verify stage's top 5 abstracts, each with its best passage's
P(relevant) (the stage's trace). The benchmark's is ``verify_scifact.py``'s (and the
training's, for its dev claims): the first stage's top 30 documents (Max-P) over the
BEIR-ingested corpus, reranked by the cross-encoder with its fused score. Per path: how
many gold evidence abstracts are among the 5 read, how well P(relevant) ranks gold above
the others read (AUC), and how many gold and other abstracts reach each threshold; paired
on the gold abstracts (exact McNemar per threshold), with the count of claims that read
another set of abstracts and, per threshold, of abstracts read by both that fall on
different sides of it. The product's reads are kept in ``--work`` (a rerun reads them).
Writes ``benchmarks/results/verify_scifact/relevance_paths.json``.
"""

from __future__ import annotations

import argparse
import json
import shlex
import sys
from pathlib import Path

import numpy as np

from rerank_calibrate import auc as labelled_auc
from sciera.datasets.claims import read_gold
from sciera.eval.significance import mcnemar_exact
from sciera.pipeline import verify_spec
from sciera.pipeline.build import build_pipeline
from sciera.settings import load_settings
from verify_common import DATA as SHARED
from verify_common import ROOT, log, retrieve_abstracts
from verify_product_path import dev_ids

OUT = ROOT / "benchmarks" / "results" / "verify_scifact"
THRESHOLDS = (0.3, 0.45, 0.5, 0.7)


def auc(gold: list[float], other: list[float]) -> float:
    """P(a gold score > another's), ties counted half (nan without both)."""
    labels = np.array([1] * len(gold) + [0] * len(other))
    return labelled_auc(np.array([*gold, *other], dtype=float), labels)


def summarize(read: dict[str, list[tuple[str, float]]], gold: dict[str, set[str]]) -> dict:
    """One path's counts over the claims: gold abstracts read, AUC, gold at thresholds."""
    g_scores, o_scores = [], []
    for cid, rows in read.items():
        for doc, p in rows:
            (g_scores if doc in gold[cid] else o_scores).append(p)
    return {
        "gold_abstracts": sum(len(v) for v in gold.values()),
        "gold_read": len(g_scores),
        "auc_gold_vs_other_read": round(auc(g_scores, o_scores), 4),
        "gold_at_least": {str(t): sum(p >= t for p in g_scores) for t in THRESHOLDS},
        "other_at_least": {str(t): sum(p >= t for p in o_scores) for t in THRESHOLDS},
    }


def product_reads(golds: list, corpus: Path, cache: Path) -> dict[str, list[tuple[str, float]]]:
    """``{claim id: [(doc_id, P(relevant)), ...]}`` as ``sciera verify`` reads them (the
    verify stage's trace), kept in ``cache`` per corpus store (its fingerprint: a store
    ingested again is read again; a stopped run resumes)."""
    from sciera.corpus import PassageStore

    with PassageStore.open(corpus) as store:
        key = store.fingerprint()
    saved = json.loads(cache.read_text(encoding="utf-8")) if cache.is_file() else {}
    done = saved.get(key, {})
    todo = [g for g in golds if g.id not in done]
    if todo:
        settings = load_settings()
        pipe = build_pipeline(verify_spec(settings), settings, corpus=corpus)
        for n, g in enumerate(todo, 1):
            trace = pipe.run(g.claim, "yesno").traces["verify"]
            rel = trace.get("relevance") or {}
            done[g.id] = [[d, float(rel.get(d) or 0.0)] for d in trace["documents"]]
            cache.parent.mkdir(parents=True, exist_ok=True)
            cache.write_text(json.dumps({**saved, key: done}), encoding="utf-8")
            if n == 1 or n % 25 == 0:
                log(f"product path: {n}/{len(todo)}")
    return {g.id: [(d, float(x)) for d, x in done[g.id]] for g in golds}


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--corpus", type=Path, required=True, help="the corpus sciera verify reads")
    ap.add_argument("--bench-corpus", type=Path, default=ROOT / "corpora" / "scifact")
    ap.add_argument("--model", default="scifact-verifier")
    ap.add_argument("--work", type=Path, default=Path("/tmp/sciera-bench/verify"))
    args = ap.parse_args()
    settings = load_settings()
    ids = set(dev_ids(args.model))
    golds = [g for g in read_gold(SHARED / "scifact" / "claims_train.jsonl") if g.id in ids]
    gold = {g.id: set(g.evidence) for g in golds}
    k = int(settings.verify.abstracts)

    bench_all = retrieve_abstracts(
        {g.id: g.claim for g in golds}, args.bench_corpus, args.work / "retrieval.json"
    )
    bench = {c: [(d, float(x)) for d, x in rows[:k]] for c, rows in bench_all.items()}
    product = product_reads(golds, args.corpus, args.work / "product_reads.json")

    paths = {"product": product, "benchmark": bench}
    by_doc = {name: {c: dict(rows) for c, rows in read.items()} for name, read in paths.items()}
    both = [
        (g.id, d) for g in golds for d in by_doc["product"][g.id] if d in by_doc["benchmark"][g.id]
    ]
    paired, crossings = {}, {}
    for t in THRESHOLDS:
        reached = {
            name: [docs[g.id].get(d, 0.0) >= t for g in golds for d in sorted(gold[g.id])]
            for name, docs in by_doc.items()
        }
        paired[str(t)] = mcnemar_exact(reached["benchmark"], reached["product"]).as_dict()
        crossings[str(t)] = sum(
            (by_doc["product"][c][d] >= t) != (by_doc["benchmark"][c][d] >= t) for c, d in both
        )
    out = {
        "command": "python " + shlex.join(sys.argv),
        "model": args.model,
        "claims": len(golds),
        "abstracts_read": k,
        "product": f"{args.corpus}: the pipeline's retrieval, DeepEra, the verify stage's trace",
        "benchmark": f"{args.bench_corpus}: hybrid top 30 (Max-P), cross-encoder fused",
        "paths": {name: summarize(read, gold) for name, read in paths.items()},
        "paired_gold_at_least_product_vs_benchmark": paired,
        "claims_reading_other_abstracts": sum(
            {d for d, _ in product[g.id]} != {d for d, _ in bench[g.id]} for g in golds
        ),
        "abstracts_read_by_both_across_each_threshold": crossings,
    }
    OUT.mkdir(parents=True, exist_ok=True)
    path = OUT / "relevance_paths.json"
    path.write_text(json.dumps(out, indent=1) + "\n", encoding="utf-8")
    for name, s in out["paths"].items():
        print(name, json.dumps(s))
    print(json.dumps(paired), f"-> {path}")


if __name__ == "__main__":
    main()
