"""A trained cross-encoder over the first stage, on every judged query of a collection.

Run from the repository root with the venv active (no network needed)::

    python benchmarks/rerank_trained.py --dataset scifact --model scifact-minilm --depths 30 100
    python benchmarks/rerank_trained.py --dataset nfcorpus --model scifact-minilm --depths 30
    python benchmarks/rerank_trained.py --dataset pubmedqa --model scifact-minilm --depths 30
    python benchmarks/rerank_trained.py --dataset ssli --model scifact-minilm --depths 30

Datasets (all from ../shared/data, never trained on except SciFact train):
- ``scifact``: BEIR SciFact test, all 300 claims, corpus ``corpora/scifact``;
- ``nfcorpus``: NFCorpus dev (325 queries with judgments, graded 0-2), its dev.docs
  ingested into ``corpora/nfcorpus-dev`` (converted to JSONL once);
- ``pubmedqa``: PubMedQA PQA-L dev as retrieval, each question's own abstract the relevant
  document, the 500 abstracts ingested into ``corpora/pubmedqa-dev``;
- ``ssli``: the SSLI setting as a user meets it, through the whole product path: the
  evaluation SSLI set's questions that have distractors (``corpora/ssli-scifact``, the 96
  of ``benchmarks/experiments/ssli_scifact.yaml``; their abstracts never trained on), over
  SciFact with every distractor added as a document of its own (``corpora/scifact-ssli``,
  made by :func:`sciera.datasets.ssli.inject.inject`, as ``sciera dataset inject`` does,
  and indexed like any corpus), the gold
  passages' documents relevant. Unlike the candidate-pool experiments, the first stage
  retrieves the distractors itself and the fused calibrator reads its real ranks;
  ``distractors`` reports how often a distractor is ranked first and kept at each tau;
- ``ssli-base``: the same questions over SciFact alone (the Base setting).

The first stage is the hybrid retriever (RRF of BM25 and the settings' embedder, or
``--embedder``), documents by Max-P. For
each depth the top ``depth`` documents are reranked by the cross-encoder with scoring
``ce`` (its logit) and ``fused`` (the dev-fitted calibrator over the logit and the first
stage's score and rank); the rest follows in first-stage order. Every reranked run is
paired against the first stage on the same queries: Fisher's randomization test on
nDCG@10, the exact McNemar test on hit@1. Reranking seconds per query are measured
(model loaded, one warm-up query first). ``--versus fp32`` (with ``--precision int8``)
also runs the fused mode at the other precision in the same run and pairs the two
(int8 - fp32) on the same queries. ``--refusals-versus FILE`` pairs the filter's
refusals at each tau with those of an earlier result file of this script (another model
on the same dataset), by the exact McNemar test, and, when that file kept per-query values
(``per_query`` of its fused runs, kept since 2026-11-27), its nDCG@10 and hit@1 too.
Writes ``benchmarks/results/rerank_trained_<dataset>.json``.
"""

from __future__ import annotations

import argparse
import json
import shlex
import sys
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
DATA = ROOT.parent / "shared" / "data"
SSLI = ROOT / "corpora" / "ssli-scifact" / "instances.jsonl"  # the evaluation SSLI set
METRICS = ("ndcg@10", "hit@1", "recall@10", "mrr@10")


def log(msg: str) -> None:
    print(f"{time.strftime('%H:%M:%S')} {msg}", file=sys.stderr, flush=True)


def _write_jsonl(path: Path, rows) -> None:
    path.parent.mkdir(parents=True, exist_ok=True)
    tmp = path.with_suffix(".tmp")
    with tmp.open("w", encoding="utf-8") as out:
        for row in rows:
            out.write(json.dumps(row, ensure_ascii=False) + "\n")
    tmp.rename(path)


def prepare(dataset: str, work: Path, settings) -> tuple[Path, Path, Path]:
    """(corpus dir, queries file, qrels file) for ``dataset``, ingested and indexed."""
    from sciera.corpus import ingest
    from sciera.retrieve.build import ensure_indexes

    if dataset == "scifact":
        src, corpus = DATA / "scifact", ROOT / "corpora" / "scifact"
        queries, qrels = src / "queries.jsonl", src / "qrels" / "test.tsv"
    elif dataset == "nfcorpus":
        src, corpus = DATA / "nfcorpus-dev", ROOT / "corpora" / "nfcorpus-dev"
        conv = work / "nfcorpus-dev"
        docs = (line.rstrip("\n").split("\t", 1) for line in (src / "dev.docs").open())
        _write_jsonl(conv / "corpus.jsonl", ({"_id": d, "title": "", "text": t} for d, t in docs))
        qs = (line.rstrip("\n").split("\t", 1) for line in (src / "dev.titles.queries").open())
        _write_jsonl(conv / "queries.jsonl", ({"_id": q, "text": t} for q, t in qs))
        src, queries, qrels = conv, conv / "queries.jsonl", DATA / "nfcorpus-dev" / "dev.2-1-0.qrel"
    elif dataset == "pubmedqa":
        items = json.loads((DATA / "pubmedqa" / "pqal_dev.json").read_text())
        conv, corpus = work / "pubmedqa-dev", ROOT / "corpora" / "pubmedqa-dev"
        _write_jsonl(
            conv / "corpus.jsonl",
            ({"_id": k, "title": "", "text": " ".join(v["CONTEXTS"])} for k, v in items.items()),
        )
        _write_jsonl(
            conv / "queries.jsonl", ({"_id": k, "text": v["QUESTION"]} for k, v in items.items())
        )
        (conv / "qrels.tsv").write_text(
            "query-id\tcorpus-id\tscore\n" + "".join(f"{k}\t{k}\t1\n" for k in items)
        )
        src, queries, qrels = conv, conv / "queries.jsonl", conv / "qrels.tsv"
    elif dataset in ("ssli", "ssli-base"):
        from sciera.datasets.ssli.inject import FOLDER, inject

        src, corpus = DATA / "scifact", ROOT / "corpora" / "scifact"
        if not SSLI.exists():
            raise SystemExit(f"{SSLI}: build or unpack the SSLI set first (README, SSLI section)")
        ingest(src, corpus, format="beir")
        beir = inject(SSLI, corpus, ROOT / "corpora" / "scifact-ssli").out / FOLDER
        queries, qrels = beir / "queries.jsonl", beir / "qrels" / "test.tsv"
        if dataset == "ssli":
            src, corpus = beir, beir.parent
    else:
        raise SystemExit(f"unknown dataset {dataset}")
    ingest(src, corpus, format="beir")
    if ensure_indexes(corpus, "hybrid", settings):
        log(f"indexed {corpus}")
    return corpus, queries, qrels


def distractor_table(run: dict, probabilities: bool) -> dict:
    """How the SSLI distractors fare in a run: the queries with a distractor ranked first,
    and, when its scores are P(relevant), per tau the distractors kept and the queries
    keeping one."""
    from sciera.datasets.ssli.inject import is_distractor
    from sciera.eval.metrics import trec_order

    first = sorted(q for q in run if run[q] and is_distractor(trec_order(run[q])[0]))
    table: dict = {"ranked_first": len(first), "ranked_first_queries": first}
    for tau in TAUS if probabilities else ():
        kept = {q: [d for d, sc in run[q].items() if sc >= tau and is_distractor(d)] for q in run}
        table[str(tau)] = {
            "kept": sum(map(len, kept.values())),
            "queries_keeping_one": sum(bool(v) for v in kept.values()),
        }
    return table


TAUS = (0.3, 0.5, 0.6, 0.7, 0.8, 0.9)


def tau_table(run: dict, qrels: dict, base_run: dict, depth: int) -> dict:
    """DeepEra's filter with this scorer: per tau, the documents whose P(relevant) >= tau
    (the reranked head's scores are the calibrated probabilities; the tail's are below 0),
    their precision, the recall of the gold documents among the candidates, and how many
    answerable queries (a gold document in the first stage's top ``depth``) keep nothing,
    and which (``refused``, sorted ids), so two runs' refusals can be paired."""
    from sciera.eval.metrics import trec_order

    answerable = [
        q for q in run if any(qrels[q].get(d, 0) > 0 for d in trec_order(base_run[q])[:depth])
    ]
    table = {}
    for tau in TAUS:
        kept = rel = gold_in = gold_kept = 0
        refused = []
        for q in run:
            docs = [d for d, sc in run[q].items() if sc >= tau]
            hits = sum(qrels[q].get(d, 0) > 0 for d in docs)
            kept, rel = kept + len(docs), rel + hits
            cands = trec_order(base_run[q])[:depth]
            gold_in += sum(qrels[q].get(d, 0) > 0 for d in cands)
            gold_kept += hits
            if q in answerable and not docs:
                refused.append(q)
        table[str(tau)] = {
            "kept": kept,
            "precision": rel / kept if kept else None,
            "recall_of_candidate_gold": gold_kept / gold_in if gold_in else None,
            "answerable": len(answerable),
            "answerable_with_nothing_kept": len(refused),
            "refused": sorted(refused),
        }
    return table


def first_stage_name(embedder: str) -> str:
    return f"hybrid (RRF bm25 + {embedder}), Max-P documents"


def load_versus(path: Path | None, dataset: str, queries: int, embedder: str) -> dict | None:
    """The result file ``--refusals-versus`` names, read and checked before any model runs:
    it must be this script's run over the same dataset, number of queries and first stage
    (so its answerable queries are this run's)."""
    if path is None:
        return None
    other = json.loads(path.read_text(encoding="utf-8"))
    name = first_stage_name(embedder)
    theirs = (other.get("dataset"), other.get("queries"), other.get("first_stage", {}).get("name"))
    if theirs != (dataset, queries, name):
        raise SystemExit(
            f"{path}: a run of {theirs}, not of {(dataset, queries, name)}: "
            "refusals pair only on the same queries and first stage"
        )
    return other


def refusals_versus(table: dict, other: dict) -> dict:
    """Per tau, this run's refusals (answerable queries with nothing kept) paired with
    another run's (:func:`load_versus` checked it is over the same queries and first stage):
    the exact McNemar test, A = the other run, B = this one (mean_diff = this run's refusal
    rate - the other's). A differing number of answerable queries is refused."""
    from sciera.eval.significance import mcnemar_exact

    out = {}
    for tau, row in table.items():
        theirs = other.get(tau)
        if not theirs or "refused" not in theirs:
            continue
        if theirs["answerable"] != row["answerable"]:
            raise SystemExit(
                f"tau {tau}: {theirs['answerable']} answerable queries there, "
                f"{row['answerable']} here: not the same queries or first stage"
            )
        mine, their = set(row["refused"]), set(theirs["refused"])
        both = sorted(mine | their)
        rest = row["answerable"] - len(both)  # answerable, refused by neither
        a = [q in their for q in both] + [False] * rest
        b = [q in mine for q in both] + [False] * rest
        out[tau] = mcnemar_exact(a, b).as_dict()
    return out


def ranking_versus(mine: dict, theirs: dict | None) -> dict:
    """nDCG@10 (Fisher's randomization test) and hit@1 (exact McNemar) of this fused run
    paired per query with another file's (A = the other run, B = this one); nothing when
    that file kept no per-query values (files written before they were kept)."""
    from sciera.eval.significance import mcnemar_exact, paired_randomization

    if not theirs:
        return {}
    if set(theirs) != set(mine):
        raise SystemExit("--refusals-versus: its per-query values are over other queries")
    qs = sorted(mine)
    return {
        "ndcg@10": paired_randomization(
            [theirs[q]["ndcg@10"] for q in qs], [mine[q]["ndcg@10"] for q in qs]
        ).as_dict(),
        "hit@1": mcnemar_exact(
            [theirs[q]["hit@1"] > 0 for q in qs], [mine[q]["hit@1"] > 0 for q in qs]
        ).as_dict(),
    }


class MemoLogits:
    """The cross-encoder's logits, each (query, passage) computed once and timed."""

    def __init__(self, logits) -> None:
        self.inner, self.memo, self.seconds, self.pairs = logits, {}, 0.0, 0

    def __call__(self, query: str, passages):
        todo = [p for p in passages if (query, p.passage_id) not in self.memo]
        if todo:
            t0 = time.perf_counter()
            for p, x in zip(todo, self.inner(query, todo), strict=True):
                self.memo[(query, p.passage_id)] = x
            self.seconds += time.perf_counter() - t0
            self.pairs += len(todo)
        return [self.memo[(query, p.passage_id)] for p in passages]


def main() -> None:
    ap = argparse.ArgumentParser(
        description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter
    )
    ap.add_argument(
        "--dataset",
        default="scifact",
        choices=("scifact", "nfcorpus", "pubmedqa", "ssli", "ssli-base"),
    )
    ap.add_argument("--model", default="scifact-minilm")
    ap.add_argument("--depths", type=int, nargs="+", default=[30, 100])
    ap.add_argument("--modes", nargs="+", default=["ce", "fused"], choices=("ce", "fused"))
    ap.add_argument("--precision", default="fp32", choices=("fp32", "int8"))
    ap.add_argument(
        "--versus",
        choices=("fp32", "int8"),
        help="also run the fused mode at this precision and pair it with --precision's",
    )
    ap.add_argument(
        "--embedder",
        help="First stage: hybrid with this embedder, a backend (minilm, scifact-minilm) or a "
        "model trained by `sciera train embedder` (default: the settings' embedder)",
    )
    ap.add_argument(
        "--refusals-versus",
        type=Path,
        help="a result file of this script (same dataset, first stage and depth): pair each "
        "tau's refusals (answerable queries with nothing kept) with its fused run's",
    )
    ap.add_argument("--work", type=Path, default=Path("/tmp/sciera-bench/rerank_trained"))
    ap.add_argument("--out", type=Path)
    args = ap.parse_args()
    from sciera.corpus import load_beir_queries, load_qrels
    from sciera.embed.registry import EMBEDDERS
    from sciera.eval.metrics import evaluate, evaluate_per_query
    from sciera.eval.retrieval import search_run
    from sciera.eval.significance import mcnemar_exact, paired_randomization
    from sciera.rerank.cross_encoder import CrossEncoderReranker
    from sciera.rerank.reranked import RerankedRetriever
    from sciera.retrieve import open_retriever
    from sciera.settings import load_settings

    if args.embedder is None:
        settings = load_settings()
    elif args.embedder in EMBEDDERS and args.embedder != "sentence-transformers":
        settings = load_settings(embed={"backend": args.embedder})
    else:
        settings = load_settings(embed={"backend": "sentence-transformers", "model": args.embedder})
    embedder = settings.embed.model or settings.embed.backend
    corpus, qpath, rpath = prepare(args.dataset, args.work, settings)
    qrels = load_qrels(rpath)
    allq = load_beir_queries(qpath)
    queries = {q: allq[q] for q in sorted(qrels) if q in allq}
    first = open_retriever(corpus, "hybrid", settings)
    versus_file = load_versus(args.refusals_versus, args.dataset, len(queries), embedder)
    depth = max(100, *args.depths)
    log(f"{args.dataset}: first stage over {len(queries)} queries")
    base_run, base_s = search_run(first, queries, depth, "document")
    base = evaluate_per_query(base_run, qrels, METRICS)
    out: dict = {
        "command": shlex.join(["python", *sys.argv]),
        "dataset": args.dataset,
        "queries": len(queries),
        "model": args.model,
        "precision": args.precision,
        "first_stage": {
            "name": first_stage_name(embedder),
            "metrics": evaluate(base_run, qrels, METRICS),
            "seconds_per_query": base_s / len(queries),
            **(
                {"distractors": distractor_table(base_run, False)} if args.dataset == "ssli" else {}
            ),
        },
        "reranked": {},
    }
    fused = CrossEncoderReranker(
        args.model, home=settings.home, score="fused", precision=args.precision
    )
    raw = CrossEncoderReranker(args.model, home=settings.home, score="raw")
    memo = MemoLogits(fused.logits)  # both modes rank by the same logits, computed once
    fused.logits = raw.logits = memo  # type: ignore[method-assign]
    rerankers = {"ce": raw, "fused": fused}
    keys = ("score_mode", "best_epoch", "dev", "recalibrated")
    out["card"] = {k: fused.card[k] for k in keys if k in fused.card}
    qids = sorted(queries)
    fused_per: dict[int, dict] = {}
    for d in sorted(args.depths):
        for mode in args.modes:
            pipe = RerankedRetriever(first, rerankers[mode], depth=d, unit="document")
            log(f"  {mode} @ {d} ...")
            before = (memo.seconds, memo.pairs)
            run, _ = search_run(pipe, queries, depth, "document", batch_size=16)
            per = evaluate_per_query(run, qrels, METRICS)
            # A = the first stage, B = the reranked run: mean_diff = reranked - first stage
            nd = paired_randomization(
                [base[q]["ndcg@10"] for q in qids], [per[q]["ndcg@10"] for q in qids]
            )
            hit = mcnemar_exact(
                [base[q]["hit@1"] > 0 for q in qids], [per[q]["hit@1"] > 0 for q in qids]
            )
            pairs = memo.pairs - before[1]
            out["reranked"][f"{mode}@{d}"] = {
                "metrics": evaluate(run, qrels, METRICS),
                "vs_first_stage": {"ndcg@10": nd.as_dict(), "hit@1": hit.as_dict()},
                # model time for the pairs this run scored first (0 when an earlier mode or
                # a shallower depth had scored them already: logits are shared)
                "model_seconds_per_query": (memo.seconds - before[0]) / len(queries),
                "pairs_scored": pairs,
            }
            if args.dataset == "ssli":
                out["reranked"][f"{mode}@{d}"]["distractors"] = distractor_table(
                    run, probabilities=mode == "fused"
                )
            if mode == "fused":
                fused_per[d] = per
                table = tau_table(run, qrels, base_run, d)
                row = out["reranked"][f"{mode}@{d}"]
                row["filter"] = table
                row["per_query"] = {q: {m: per[q][m] for m in ("ndcg@10", "hit@1")} for q in qids}
                if versus_file:
                    theirs = versus_file["reranked"].get(f"fused@{d}", {})
                    row["refusals_versus"] = {
                        "file": str(args.refusals_versus),
                        "model": versus_file.get("model"),
                        "precision": versus_file.get("precision"),
                        "by_tau": refusals_versus(table, theirs.get("filter", {})),
                        **ranking_versus(row["per_query"], theirs.get("per_query")),
                    }
            log(f"    {json.dumps(out['reranked'][f'{mode}@{d}']['metrics'])}")
    out["model_seconds_per_pair"] = memo.seconds / max(memo.pairs, 1)
    if args.versus and args.versus != args.precision and fused_per:
        other = CrossEncoderReranker(
            args.model, home=settings.home, score="fused", precision=args.versus
        )
        vmemo = MemoLogits(other.logits)
        other.logits = vmemo  # type: ignore[method-assign]
        out["versus"] = {"precision": args.versus, "runs": {}}
        for d, per_b in sorted(fused_per.items()):
            log(f"  fused @ {d} at {args.versus} ...")
            before = vmemo.seconds
            pipe = RerankedRetriever(first, other, depth=d, unit="document")
            run, _ = search_run(pipe, queries, depth, "document", batch_size=16)
            per_a = evaluate_per_query(run, qrels, METRICS)
            # A = --versus precision, B = --precision: mean_diff = B - A
            nd = paired_randomization(
                [per_a[q]["ndcg@10"] for q in qids], [per_b[q]["ndcg@10"] for q in qids]
            )
            hit = mcnemar_exact(
                [per_a[q]["hit@1"] > 0 for q in qids], [per_b[q]["hit@1"] > 0 for q in qids]
            )
            out["versus"]["runs"][f"fused@{d}"] = {
                "metrics": evaluate(run, qrels, METRICS),
                "model_seconds_per_query": (vmemo.seconds - before) / len(queries),
                f"{args.precision}_vs_{args.versus}": {
                    "ndcg@10": nd.as_dict(),
                    "hit@1": hit.as_dict(),
                },
            }
            log(f"    {json.dumps(out['versus']['runs'][f'fused@{d}'])}")
    suffix = (f"_{args.embedder}" if args.embedder else "") + (
        "_int8" if args.precision == "int8" else ""
    )
    path = (
        args.out or ROOT / "benchmarks" / "results" / f"rerank_trained_{args.dataset}{suffix}.json"
    )
    path.write_text(json.dumps(out, indent=1) + "\n")
    log(f"wrote {path}")
    for name, row in [("first_stage", out["first_stage"]), *out["reranked"].items()]:
        m = row["metrics"]
        print(f"{name:<14} nDCG@10 {m['ndcg@10']:.4f}  hit@1 {m['hit@1']:.4f}")


if __name__ == "__main__":
    main()
