"""A trained embedder as the dense half of the first stage, against the offline MiniLM it
started from, on every judged query of a collection.

Run from the repository root with the venv active (no network needed)::

    python benchmarks/embedder_trained.py --dataset scifact      # the shipped scifact-minilm
    python benchmarks/embedder_trained.py --dataset nfcorpus
    python benchmarks/embedder_trained.py --dataset pubmedqa
    python benchmarks/embedder_trained.py --dataset scifact --model MY-TRAINED-NAME

The corpus (the one ``rerank_trained.py`` prepares: ``corpora/scifact`` or
``corpora/nfcorpus-dev``) is indexed with the trained embedder if it is not yet (its dense
index, e.g. ``dense-scifact-minilm``, sits beside ``dense-minilm``). Runs: BM25, dense and hybrid
(RRF, k=60) with MiniLM, dense and hybrid with the trained model; documents by Max-P.
Paired against the MiniLM counterpart on the same queries: Fisher's randomization test on
nDCG@10 and Recall@100, the exact McNemar test on hit@1. Writes
``benchmarks/results/embedder_trained_<dataset>.json``.
"""

from __future__ import annotations

import argparse
import json
import shlex
import sys
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))
from rerank_trained import ROOT, log, prepare

METRICS = ("ndcg@10", "hit@1", "recall@100", "mrr@10")


def main() -> None:
    ap = argparse.ArgumentParser(
        description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter
    )
    ap.add_argument("--dataset", default="scifact", choices=("scifact", "nfcorpus", "pubmedqa"))
    ap.add_argument(
        "--model",
        default="scifact-minilm",
        help="an embedder backend (the shipped scifact-minilm) or a trained model name/path",
    )
    ap.add_argument("--work", type=Path, default=Path("/tmp/sciera-bench/rerank_trained"))
    ap.add_argument("--out", type=Path)
    args = ap.parse_args()
    from sciera.corpus import load_beir_queries, load_qrels
    from sciera.embed.registry import EMBEDDERS
    from sciera.errors import StaleIndexError
    from sciera.eval.metrics import evaluate, evaluate_per_query
    from sciera.eval.retrieval import search_run
    from sciera.eval.significance import mcnemar_exact, paired_randomization
    from sciera.retrieve import build_indexes, open_retriever
    from sciera.settings import load_settings

    base = load_settings(embed={"backend": "minilm"})  # pinned: the default may change
    if args.model in EMBEDDERS and args.model != "sentence-transformers":
        trained = load_settings(embed={"backend": args.model})
    else:
        trained = load_settings(embed={"backend": "sentence-transformers", "model": args.model})
    corpus, qpath, rpath = prepare(args.dataset, args.work, base)
    try:
        open_retriever(corpus, "dense", trained)
    except StaleIndexError:
        log(f"embedding {corpus} with {args.model} ...")
        t0 = time.perf_counter()
        build_indexes(corpus, trained, which=("dense",))
        log(f"  {time.perf_counter() - t0:.0f}s")
    qrels = load_qrels(rpath)
    allq = load_beir_queries(qpath)
    queries = {q: allq[q] for q in sorted(qrels) if q in allq}
    qids = sorted(queries)
    runs = {
        "bm25": (open_retriever(corpus, "bm25", base), None),
        "dense_minilm": (open_retriever(corpus, "dense", base), None),
        "dense_trained": (open_retriever(corpus, "dense", trained), "dense_minilm"),
        "hybrid_minilm": (open_retriever(corpus, "hybrid", base), None),
        "hybrid_trained": (open_retriever(corpus, "hybrid", trained), "hybrid_minilm"),
    }
    out: dict = {
        "command": shlex.join(["python", *sys.argv]),
        "dataset": args.dataset,
        "queries": len(queries),
        "model": args.model,
        "runs": {},
    }
    per: dict[str, dict] = {}
    for name, (retriever, against) in runs.items():
        log(f"{name} over {len(queries)} queries")
        run, seconds = search_run(retriever, queries, 100, "document")
        per[name] = evaluate_per_query(run, qrels, METRICS)
        row: dict = {
            "metrics": evaluate(run, qrels, METRICS),
            "seconds_per_query": seconds / len(queries),
        }
        if against is not None:
            a, b = per[against], per[name]
            # mean_diff = this run - its MiniLM counterpart
            row[f"vs_{against}"] = {
                m: paired_randomization([a[q][m] for q in qids], [b[q][m] for q in qids]).as_dict()
                for m in ("ndcg@10", "recall@100")
            }
            row[f"vs_{against}"]["hit@1"] = mcnemar_exact(
                [a[q]["hit@1"] > 0 for q in qids], [b[q]["hit@1"] > 0 for q in qids]
            ).as_dict()
        out["runs"][name] = row
        log(f"  {json.dumps(row['metrics'])}")
    path = args.out or ROOT / "benchmarks" / "results" / f"embedder_trained_{args.dataset}.json"
    path.write_text(json.dumps(out, indent=1) + "\n")
    log(f"wrote {path}")
    for name, row in out["runs"].items():
        m = row["metrics"]
        line = f"nDCG@10 {m['ndcg@10']:.4f}  hit@1 {m['hit@1']:.4f}  R@100 {m['recall@100']:.4f}"
        print(f"{name:<15} {line}")


if __name__ == "__main__":
    main()
