"""SciFact TEST reranker benchmark: hybrid top-30 documents -> each reranker (issue 4).

Run from the repository root with the venv active (no network needed)::

    python benchmarks/rerank_scifact.py --claims 100 --seed 7 --depth 30
    # options: --rerankers first_stage embedding llm_pointwise llm_graded llm_listwise
    #                      deepera deepera_nofilter cross_encoder deepera_ce   (default: all)
    #          --limit-minutes 60  --max-queries-per-run 10  --calibrator auto|none|PATH
    #          --work /tmp/sciera-rerank-bench/scifact  --out-dir benchmarks/results
    #          --no-llm-cache  --report-only

1. Claims: the SciFact test qids (qrels/test.tsv), sorted as strings, shuffled with
   ``random.Random(seed)``; the first ``--claims`` are used (so a smaller subset is a prefix
   of a larger one). Qrels are per document.
2. First stage through sciera itself: ingest the BEIR folder into ``--work`` (a no-op when
   the store is already complete), build the indexes if missing or stale, hybrid = RRF
   (k=60) of BM25 and the default dense embedder, passages Max-P'd to the top ``--depth``
   documents (each document is represented by its best passage). Candidates are stored in
   ``<out-dir>/rerank_scifact_candidates_<tag>.json`` and reused by reruns.
3. Rerankers (one shared LLM, the default model): ``first_stage`` (no rerank), ``embedding``,
   ``llm_pointwise``, ``llm_graded``, ``llm_listwise``, ``deepera`` (intent + filter +
   summary, calibrator "auto"; its pipeline's filter keeps passages >= tau, at most top_k,
   so its metrics are on the filtered list) and ``deepera_nofilter`` (no filter, no
   summaries: the full score ordering), ``cross_encoder`` (the shipped trained
   cross-encoder, its card's scoring) and ``deepera_ce`` (DeepEra with
   ``scorer="cross_encoder"``: the cross-encoder's calibrated P(relevant) replaces the
   LLM's grade; the LLM writes the intent and the summaries). For every claim every
   selected reranker runs before the next claim, so a partial run still gives paired
   comparisons.
4. Metrics (sciera.eval.metrics, ranked document lists as returned): nDCG@10, HitRate@1/3,
   RP (SPEC: N = number of candidates), seconds/query, LLM calls and prompt/completion
   tokens/query (counted on every reply, cache hits included, with the hits reported
   separately), DeepEra kept passages/query and micro precision/recall of kept vs qrels; for
   deepera_nofilter also the calibration on these test claims (ECE, reliability bins and
   diagram, kept precision/recall per tau).
   Every reranker's first-stage numbers are reported over exactly the claims it completed.

One JSONL row per (reranker, qid) is appended and fsynced to
``<out-dir>/rerank_scifact_rows_<tag>.jsonl`` as it finishes; a restart skips what is done.
The LLM response cache (SCIERA_HOME/llm-cache.sqlite) is on by default: deepera_nofilter
reuses deepera's intent and grading replies (same prompts) and grades only what deepera
pruned (passages no grade could have kept), so its seconds are not a cost; deepera's
``seconds_without_summary`` is. ``--no-llm-cache`` makes every reranker pay.
The LLM context is the library default (4096, ``--n-ctx`` to change): llm_listwise's window
of 20 passages x 120 words is ~4,000-4,300 prompt tokens on SciFact, so the reranker cuts
the passages to fit and records the words it used per window.
The first LLM evaluation of a process pages the weights in, so an unmetered 1-token warm-up
runs first. The report is ``<out-dir>/rerank_scifact.json``.
"""

from __future__ import annotations

import argparse
import hashlib
import json
import os
import random
import shlex
import signal
import statistics
import sys
import time
from collections.abc import Iterator, Mapping
from contextlib import contextmanager
from pathlib import Path
from typing import Any

from sciera.corpus import PassageStore, ingest, load_beir_queries, load_qrels
from sciera.errors import StaleIndexError
from sciera.eval.metrics import evaluate, evaluate_per_query
from sciera.eval.significance import mcnemar_exact, paired_randomization
from sciera.settings import Settings, load_settings
from sciera.types import Ranking, ScoredPassage

ROOT = Path(__file__).resolve().parents[1]
RERANKERS = (
    "first_stage",
    "embedding",
    "llm_pointwise",
    "llm_graded",
    "llm_listwise",
    "deepera",
    "deepera_nofilter",
    "cross_encoder",
    "deepera_ce",
)
LLM_RERANKERS = {
    "llm_pointwise",
    "llm_graded",
    "llm_listwise",
    "deepera",
    "deepera_nofilter",
    "deepera_ce",
}
METRICS = ("ndcg@10", "hit@1", "hit@3", "rp")
STAGE = "hybrid+maxp"
TEST_TAUS = (0.3, 0.4, 0.5, 0.6, 0.7, 0.8)


def log(msg: str) -> None:
    print(f"{time.strftime('%H:%M:%S')} {msg}", file=sys.stderr, flush=True)


def sample_claims(data: Path, n: int, seed: int) -> tuple[list[str], dict[str, str], dict]:
    queries = load_beir_queries(data)
    qrels = load_qrels(data / "qrels" / "test.tsv")
    pool = sorted(q for q in qrels if q in queries)
    random.Random(seed).shuffle(pool)
    return pool[:n], queries, qrels


def ensure_store(args: argparse.Namespace, cands: dict[str, Any]) -> None:
    """Ingest into ``--work`` (a no-op when complete); the store must be the candidates' one."""
    log(f"ingest {args.data} -> {args.work} (no-op when complete)")
    ingest(args.data, args.work)
    with PassageStore.open(args.work) as store:
        fingerprint = store.fingerprint()
    if cands.setdefault("store_fingerprint", fingerprint) != fingerprint:
        raise SystemExit("the candidates file was built on another store; delete it and the rows")


def build_progress(task: str, done: int, total: int) -> None:
    if done == total or done % 1024 == 0:
        log(f"  {task}: {done}/{total}")


def first_stage(
    args: argparse.Namespace, settings: Settings, embedder: Any, queries: dict, cands: dict
) -> None:
    """Hybrid RRF top-``depth`` documents for each claim in ``queries``, added to ``cands``."""
    from sciera.retrieve import build_indexes, open_retriever
    from sciera.retrieve.maxp import MaxPRetriever

    try:
        hybrid = open_retriever(args.work, "hybrid", settings, embedder)
    except StaleIndexError:
        log("building indexes (bm25 + dense) ...")
        build_indexes(args.work, settings, embedder=embedder, progress=build_progress)
        hybrid = open_retriever(args.work, "hybrid", settings, embedder)
    passage_depth = max(settings.retrieve.passage_depth, 10 * args.depth)
    retriever = MaxPRetriever(hybrid, depth=passage_depth)
    retriever.search(next(iter(queries.values())), args.depth)  # warm-up (model load)
    for qid, text in queries.items():
        t0 = time.perf_counter()
        ranking = retriever.search(text, args.depth)
        cands["claims"][qid] = {
            "seconds": time.perf_counter() - t0,
            "items": [[it.passage_id, it.passage.doc_id, it.score] for it in ranking],
        }
    cands["first_stage"] = (
        f"hybrid RRF k={settings.retrieve.rrf_k} of bm25 and dense-{settings.embed.backend} "
        f"(top {passage_depth} passages each), Max-P to top-{args.depth} documents"
    )
    args.cands_path.write_text(json.dumps(cands) + "\n")
    log(f"first stage: {len(queries)} claims -> {args.cands_path}")


def candidate_ranking(store: PassageStore, query: str, items: list) -> Ranking:
    passages = store.get_passages([pid for pid, _, _ in items])
    scored = (
        ScoredPassage(p, s, i + 1)
        for i, (p, (_, _, s)) in enumerate(zip(passages, items, strict=True))
    )
    return Ranking(query, tuple(scored), STAGE)


def build_rerankers(
    names: list[str], settings: Settings, embedder: Any, llm: Any, calibrator: str
) -> dict[str, Any]:
    """One pipeline per reranker over the given candidates (its first stage): the
    reranker, then the filter (``deepera``, ``deepera_ce``: ask's tau and top_k, and the
    summaries of the kept passages; every other: no filter, the whole reranked order)."""
    from sciera.pipeline import CANDIDATES, PipelineSpec, build_pipeline
    from sciera.settings import FilterSettings

    cal: Any = None if calibrator == "none" else calibrator
    whole = FilterSettings(use_tau=False, top_k=None)
    specs: dict[str, dict[str, Any]] = {
        "embedding": {"reranker": "embedding", "reranker_params": {"embedder": embedder}},
        # the LLM grades (named: the default scorer is trained)
        "deepera": {
            "reranker": "deepera",
            "reranker_params": {"calibrator": cal, "scorer": "llm"},
            "filter": settings.filter,
            "evidence": "deepera",
        },
        # the trained cross-encoder scores, the LLM the rest
        "deepera_ce": {
            "reranker": "deepera",
            "reranker_params": {"scorer": "cross_encoder"},
            "filter": settings.filter,
            "evidence": "deepera",
        },
        "deepera_nofilter": {
            "reranker": "deepera",
            "reranker_params": {"calibrator": cal, "scorer": "llm"},
        },
    }
    out: dict[str, Any] = {}
    for name in names:
        if name == "first_stage":
            continue
        spec = {"reranker": name, "filter": whole, **specs.get(name, {})}
        pipe = PipelineSpec(retriever=CANDIDATES, rerank_depth=10_000, **spec)
        out[name] = build_pipeline(pipe, settings, llm=llm)
    return out


def reranker_config(pipeline: Any, n_ctx: int) -> dict[str, Any]:
    """What defines a reranker's results: its scalar settings, its LLM (model id and
    context, which decides how listwise windows are cut), for DeepEra the calibrator's
    content (not where it was loaded from), and the filter."""
    reranker = pipeline.reranker
    config = {
        k: v
        for k, v in vars(reranker).items()
        if isinstance(v, int | float | str | None) and k != "calibrator_source"
    }
    llm = getattr(reranker, "llm", None)
    if llm is not None:
        config.update(model_id=llm.model_id, n_ctx=n_ctx)
    cal = getattr(reranker, "calibrator", None)
    if cal is not None:
        config["calibrator_sha256"] = hashlib.sha256(cal.to_json().encode()).hexdigest()[:16]
    f = pipeline.filter
    if f.tau is not None or f.top_k is not None:
        config["filter"] = {"tau": f.tau, "top_k": f.top_k}
    return config


def check_same_config(rows: dict, configs: dict[str, dict[str, Any]]) -> None:
    """Refuse to add rows of an LLM reranker whose earlier rows came from another config."""
    for (name, qid), row in rows.items():
        if name in configs and name in LLM_RERANKERS and row.get("config") != configs[name]:
            raise SystemExit(
                f"{name}: the row for claim {qid} was made with another configuration "
                f"({row.get('config')}), not {configs[name]}; use another --out-dir or "
                "remove that reranker's rows"
            )


def report_configs(rows: dict, configs: dict[str, dict[str, Any]]) -> dict[str, Any]:
    """Each reranker's configuration for the report: this run's, else the one its rows
    recorded (so a --report-only report keeps them); rows with several configs list all."""
    out: dict[str, Any] = {}
    for (name, _qid), row in sorted(rows.items()):
        if name in configs or row.get("config") is None:
            continue
        seen = out.setdefault(name, [])
        if row["config"] not in seen:
            seen.append(row["config"])
    out = {name: seen[0] if len(seen) == 1 else seen for name, seen in out.items()}
    return {**out, **configs}


def warm_up(llm: Any) -> None:
    """One uncached, unmetered 1-token reply: the first evaluation pages ~1 GB of weights in."""
    from sciera.llm.base import Message

    t0 = time.perf_counter()
    backend = getattr(llm.inner, "inner", llm.inner)  # below MeteredLLM and CachedLLM
    backend.complete([Message("user", "Say OK.")], max_tokens=1)
    log(f"LLM {llm.model_id} warm-up {time.perf_counter() - t0:.1f}s")


@contextmanager
def metered(llm: Any, name: str, row: dict[str, Any]) -> Iterator[None]:
    """Wall seconds and the LLM usage of the block (MeteredLLM deltas) into ``row``."""
    from sciera.llm.accounting import stage

    before = llm.totals() if llm is not None else {}
    t0 = time.perf_counter()
    with stage(f"bench.{name}"):
        yield
    row["seconds"] = time.perf_counter() - t0
    if llm is not None:
        row.update({k: v - before[k] for k, v in llm.totals().items()})


def run_one(name: str, pipeline: Any, llm: Any, ranking: Ranking) -> dict[str, Any]:
    """One claim through a reranker's pipeline: the ranking evaluation scores (the kept
    passages when its filter thresholds), its trace, what it cost."""
    row: dict[str, Any] = {"reranker": name}
    with metered(llm if name in LLM_RERANKERS else None, name, row):
        result = pipeline.run(ranking.query, candidates=ranking)
    ranked = result.final
    row["ranked"] = [it.passage.doc_id for it in ranked]
    row["scores"] = [round(it.score, 6) for it in ranked]
    trace = result.traces.get("rerank")
    if trace:
        t = dict(trace)
        t.pop("query", None)
        row["trace"] = t
        summaries = result.cost.get("evidence", {}).get("seconds", 0.0)
        row["seconds_without_summary"] = row["seconds"] - summaries
    return row


def append_row(path: Path, row: dict[str, Any]) -> None:
    from sciera.eval.resultlog import unpack_for_append

    with unpack_for_append(path).open("a+", encoding="utf-8") as fh:  # a packed log goes on
        if fh.tell() > 0:
            fh.seek(fh.tell() - 1)
            if fh.read(1) != "\n":  # a killed run left half a line
                fh.write("\n")
        fh.write(json.dumps(row, ensure_ascii=False) + "\n")
        fh.flush()
        os.fsync(fh.fileno())


def read_rows(path: Path) -> dict[tuple[str, str], dict]:
    from sciera.eval.resultlog import is_stored, read_text

    rows = {}
    if is_stored(path):  # the plain file or its packed .gz
        for line in read_text(path).splitlines():
            try:
                row = json.loads(line)
            except json.JSONDecodeError:
                continue
            rows[(row["reranker"], row["qid"])] = row
    return rows


def _mean(values: list[float]) -> float:
    return round(statistics.fmean(values), 4) if values else 0.0


def scores(rows: list[dict], qrels: Mapping) -> dict[str, float]:
    run = {r["qid"]: r["ranked"] for r in rows}
    n = {r["qid"]: r["n_candidates"] for r in rows}
    res = evaluate(run, {q: qrels[q] for q in run}, METRICS, n_candidates=n)
    return {m: round(v, 4) for m, v in res.items()}


def paired_tests(base: list[dict], other: list[dict], qrels: Mapping) -> dict[str, Any]:
    """``other`` against ``base`` claim by claim: exact McNemar on hit@1 and hit@3,
    paired randomization on nDCG@10 (two-sided p-values)."""

    def per_query(rows: list[dict]) -> dict[str, dict[str, float]]:
        run = {r["qid"]: r["ranked"] for r in rows}
        return evaluate_per_query(run, {q: qrels[q] for q in run}, ("ndcg@10", "hit@1", "hit@3"))

    a, b = per_query(base), per_query(other)
    qids = sorted(a)

    def col(res: dict, metric: str) -> list[float]:
        return [res[q][metric] for q in qids]

    out = {m: mcnemar_exact(col(a, m), col(b, m)).as_dict() for m in ("hit@1", "hit@3")}
    out["ndcg@10"] = paired_randomization(col(a, "ndcg@10"), col(b, "ndcg@10")).as_dict()
    return out


def summarize(
    rows: dict, qids: list[str], qrels: Mapping, cands: dict, out_dir: Path
) -> dict[str, Any]:
    """Per reranker: metrics over the claims it completed, and the first stage on them."""
    fs = {
        q: {"qid": q, "ranked": [doc for _, doc, _ in c["items"]], "n_candidates": len(c["items"])}
        for q, c in cands["claims"].items()
    }
    out: dict[str, Any] = {}
    names = [n for n in RERANKERS if any((n, q) in rows for q in qids)]
    for name in names:
        done = [rows[(name, q)] for q in qids if (name, q) in rows]
        ok = [r for r in done if not r.get("error")]
        rec: dict[str, Any] = {"claims_completed": len(done), "errors": len(done) - len(ok)}
        if ok:
            rec.update(scores(ok, qrels), seconds_per_query=_mean([r["seconds"] for r in ok]))
        if ok and name in LLM_RERANKERS:
            for key in ("llm_calls", "prompt_tokens", "completion_tokens", "cache_hits"):
                rec[f"{key}_per_query"] = _mean([r.get(key, 0) for r in ok])
        if ok and name.startswith("deepera"):
            rec.update(deepera_stats(ok, qrels, fs))
        if ok and name == "deepera_nofilter":
            rec["test_reliability"] = test_reliability(ok, qrels, out_dir)
        if ok and name != "first_stage":
            base = scores([fs[r["qid"]] for r in ok], qrels)
            rec["first_stage_same_claims"] = base
            # claims whose list came back in the first stage's order (a small LLM asked
            # for a permutation of 20 passages may copy the one it was shown)
            rec["first_stage_order_kept"] = sum(
                bool(r["ranked"]) and r["ranked"] == fs[r["qid"]]["ranked"][: len(r["ranked"])]
                for r in ok
            )
            rec["delta_vs_first_stage"] = {m: round(rec[m] - base[m], 4) for m in METRICS}
            rec["significance_vs_first_stage"] = paired_tests([fs[r["qid"]] for r in ok], ok, qrels)
        out[name] = rec
    if {"deepera", "llm_listwise"} <= set(names):
        out["deepera_vs_llm_listwise"] = paired_speed(rows, qids, qrels)
    if {"deepera", "deepera_ce"} <= set(names):
        out["deepera_ce_vs_deepera"] = paired_scorers(rows, qids, qrels)
    return out


def paired_scorers(rows: dict, qids: list[str], qrels: Mapping) -> dict[str, Any]:
    """DeepEra with the cross-encoder scorer against DeepEra with the LLM's grades on the
    claims both finished: seconds, the speed ratio, metrics and paired tests (filtered lists
    as returned, so a claim where nothing is kept scores 0)."""
    both = [
        q
        for q in qids
        if all((n, q) in rows and not rows[(n, q)].get("error") for n in ("deepera", "deepera_ce"))
    ]
    if not both:
        return {"claims": 0}
    llm = [rows[("deepera", q)] for q in both]
    ce = [rows[("deepera_ce", q)] for q in both]
    s_llm, s_ce = _mean([r["seconds"] for r in llm]), _mean([r["seconds"] for r in ce])
    return {
        "claims": len(both),
        "deepera_seconds_per_query": s_llm,
        "deepera_ce_seconds_per_query": s_ce,
        "speedup_ce_over_llm": round(s_llm / s_ce, 2) if s_ce else None,
        "deepera": scores(llm, qrels),
        "deepera_ce": scores(ce, qrels),
        "kept_per_query": {
            "deepera": _mean([len(r["ranked"]) for r in llm]),
            "deepera_ce": _mean([len(r["ranked"]) for r in ce]),
        },
        "significance_ce_vs_llm": paired_tests(llm, ce, qrels),
    }


def deepera_stats(rows: list[dict], qrels: Mapping, fs: dict) -> dict[str, Any]:
    """Kept passages/query; micro precision/recall of the kept documents vs the qrels."""

    def n_gold(qid: str, docs: list[str]) -> int:
        return sum(qrels[qid].get(d, 0) > 0 for d in docs)

    kept = sum(len(r["ranked"]) for r in rows)
    tp = sum(n_gold(r["qid"], r["ranked"]) for r in rows)
    gold = sum(n_gold(r["qid"], list(qrels[r["qid"]])) for r in rows)
    gold_cand = sum(n_gold(r["qid"], fs[r["qid"]]["ranked"]) for r in rows)
    return {
        "kept_per_query": _mean([len(r["ranked"]) for r in rows]),
        "kept_precision": round(tp / kept, 4) if kept else 0.0,
        "kept_recall": round(tp / gold, 4) if gold else 0.0,
        "kept_recall_of_candidate_gold": round(tp / gold_cand, 4) if gold_cand else 0.0,
        "seconds_without_summary_per_query": _mean([r["seconds_without_summary"] for r in rows]),
        "trace_prompt_tokens_per_query": _mean([r["trace"]["prompt_tokens"] for r in rows]),
        "graded_per_query": _mean(
            [sum(p["grade_expectation"] is not None for p in r["trace"]["passages"]) for r in rows]
        ),
        "intent_fallbacks": sum(r["trace"]["intent_fallback"] for r in rows),
        "score_sources": sorted({r["trace"]["score_source"] for r in rows}),
    }


def test_reliability(rows: list[dict], qrels: Mapping, out_dir: Path) -> dict[str, Any]:
    """How the calibrated scores (fitted on train claims) behave on these test claims:
    ECE, the reliability bins and a diagram, and what each tau would have kept. The scores
    are deepera_nofilter's, which are the calibrated probabilities of every candidate."""
    import numpy as np

    from sciera.rerank.calibrate import (
        expected_calibration_error,
        reliability,
        reliability_diagram,
    )
    from sciera.train.deepera_calibrator import prf_at

    p = np.array([s for r in rows for s in r["scores"]], dtype=float)
    y = np.array([int(qrels[r["qid"]].get(d, 0) > 0) for r in rows for d in r["ranked"]])
    png = reliability_diagram(
        {"DeepEra calibrated": (p, y)},
        out_dir / "rerank_scifact_test_reliability.png",
        title=f"SciFact test, {len(rows)} claims (calibrator fitted on train)",
    )
    return {
        "scores": "deepera_nofilter's scores (calibrated P(relevant)) of every candidate",
        "candidates": len(p),
        "relevant_candidates": int(y.sum()),
        "ece": round(expected_calibration_error(p, y), 4),
        "bins": reliability(p, y),
        "diagram": str(png.relative_to(ROOT) if png.is_relative_to(ROOT) else png),
        "tau_sweep": {
            f"{t:.1f}": {k: round(v, 4) for k, v in prf_at(p, y, t).items()} for t in TEST_TAUS
        },
        "recall_note": "recall is of the relevant documents among the candidates",
    }


def paired_speed(rows: dict, qids: list[str], qrels: Mapping) -> dict[str, Any]:
    both = [
        q
        for q in qids
        if all(
            (n, q) in rows and not rows[(n, q)].get("error") for n in ("deepera", "llm_listwise")
        )
    ]
    if not both:
        return {"claims": 0}
    de = [rows[("deepera", q)] for q in both]
    li = [rows[("llm_listwise", q)] for q in both]
    s_de, s_li = _mean([r["seconds"] for r in de]), _mean([r["seconds"] for r in li])
    out = {
        "claims": len(both),
        "deepera_seconds_per_query": s_de,
        "llm_listwise_seconds_per_query": s_li,
        "seconds_ratio_deepera_over_listwise": round(s_de / s_li, 3) if s_li else None,
        "deepera": scores(de, qrels),
        "llm_listwise": scores(li, qrels),
    }
    nf = [rows.get(("deepera_nofilter", q)) for q in both]
    if all(r is not None and not r.get("error") for r in nf):
        # deepera_nofilter grades exactly what deepera pruned (the rest are cache hits), so
        # the two together are what grading every candidate costs, as the paper's DeepEra does
        full = _mean([a["seconds"] + b["seconds"] for a, b in zip(de, nf, strict=True)])
        out["deepera_grading_all_seconds_per_query"] = full
        out["seconds_ratio_grading_all_over_listwise"] = round(full / s_li, 3) if s_li else None
        out["deepera_nofilter"] = scores(nf, qrels)
    return out


def parse_args() -> argparse.Namespace:
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--data", type=Path, default=ROOT.parent / "shared" / "data" / "scifact")
    ap.add_argument("--work", type=Path, default=Path("/tmp/sciera-rerank-bench/scifact"))
    ap.add_argument("--out-dir", type=Path, default=ROOT / "benchmarks" / "results")
    ap.add_argument("--claims", type=int, default=100)
    ap.add_argument("--seed", type=int, default=7)
    ap.add_argument("--depth", type=int, default=30)
    ap.add_argument(
        "--rerankers", nargs="+", choices=RERANKERS, default=list(RERANKERS), metavar="NAME"
    )
    ap.add_argument("--calibrator", default="auto", help="auto | none | path to a JSON")
    ap.add_argument("--limit-minutes", type=float, help="start no new claim after this")
    ap.add_argument("--max-queries-per-run", type=int, help="claims with pending work per run")
    ap.add_argument("--no-llm-cache", action="store_true", help="bypass the LLM response cache")
    ap.add_argument("--n-ctx", type=int, default=4096, help="LLM context window in tokens")
    ap.add_argument("--torch-threads", type=int, default=1, help="torch intra-op threads")
    ap.add_argument("--report-only", action="store_true", help="write the report, run nothing")
    args = ap.parse_args()
    args.tag = f"s{args.seed}_n{args.claims}_d{args.depth}"
    return args


def run_claims(args: argparse.Namespace, ctx: dict[str, Any], began: float) -> tuple[str, int]:
    """Every pending (reranker, claim), claim by claim; returns (why it stopped, claims run)."""
    rows, qrels, cands, todo = ctx["rows"], ctx["qrels"], ctx["cands"], ctx["todo"]
    rerankers, llm = ctx["rerankers"], ctx["llm"]
    claims_run = 0
    with PassageStore.open(args.work) as store:
        for i, qid in enumerate(ctx["qids"]):
            pending = [n for n in todo if (n, qid) not in rows]
            if not pending:
                continue
            if (
                args.limit_minutes is not None
                and time.perf_counter() - began >= 60 * args.limit_minutes
            ):
                return f"time budget of {args.limit_minutes} min reached", claims_run
            if args.max_queries_per_run is not None and claims_run >= args.max_queries_per_run:
                return f"--max-queries-per-run {args.max_queries_per_run} reached", claims_run
            claims_run += 1
            items = cands["claims"][qid]["items"]
            ranking = candidate_ranking(store, ctx["queries"][qid], items)
            gold = {d for d, g in qrels[qid].items() if g > 0}
            for name in pending:
                if name == "first_stage":
                    row = {"reranker": name, "ranked": [doc for _, doc, _ in items]}
                    row["seconds"] = cands["claims"][qid]["seconds"]
                else:
                    try:
                        row = run_one(name, rerankers[name], llm, ranking)
                    except Exception as exc:  # recorded and counted, not retried
                        row = {"reranker": name, "error": f"{type(exc).__name__}: {exc}"}
                row.update(qid=qid, n_candidates=len(items))
                if name in LLM_RERANKERS:
                    row["model_id"] = llm.model_id
                    row["config"] = ctx["configs"][name]
                append_row(args.rows_path, row)
                rows[(name, qid)] = row
                hit = int(bool(set(row.get("ranked", [])[:1]) & gold))
                log(
                    f"[{i + 1}/{len(ctx['qids'])}] {qid} {name}: {row.get('seconds', 0):.1f}s "
                    f"hit@1={hit} returned={len(row.get('ranked', []))} "
                    f"tokens={row.get('prompt_tokens', 0)}+{row.get('completion_tokens', 0)}"
                    + (f" ERROR {row['error']}" if row.get("error") else "")
                )
    return "", claims_run


def main() -> None:
    args = parse_args()
    os.environ.setdefault("HF_HUB_OFFLINE", "1")  # every model is local
    signal.signal(signal.SIGTERM, signal.default_int_handler)  # stop cleanly, still report
    began, load_start = time.perf_counter(), os.getloadavg()
    args.out_dir.mkdir(parents=True, exist_ok=True)
    args.rows_path = args.out_dir / f"rerank_scifact_rows_{args.tag}.jsonl"
    args.cands_path = args.out_dir / f"rerank_scifact_candidates_{args.tag}.json"
    settings = load_settings(llm={"cache": not args.no_llm_cache, "n_ctx": args.n_ctx})
    qids, queries, qrels = sample_claims(args.data, args.claims, args.seed)
    rows = read_rows(args.rows_path)
    cands = json.loads(args.cands_path.read_text()) if args.cands_path.exists() else {}
    cands.setdefault("claims", {})
    todo = [n for n in args.rerankers if any((n, q) not in rows for q in qids)]
    todo = [] if args.report_only else todo
    missing = {q: queries[q] for q in qids if q not in cands["claims"]}
    embedder = llm = None
    if todo:
        ensure_store(args, cands)
    if todo and (missing or "embedding" in todo):
        import torch

        from sciera.embed.registry import create_embedder

        torch.set_num_threads(args.torch_threads)
        embedder = create_embedder(settings.embed)
    if todo and missing:
        first_stage(args, settings, embedder, missing, cands)
    if LLM_RERANKERS & set(todo):
        from sciera.llm.metered import MeteredLLM
        from sciera.llm.registry import make_llm

        llm = MeteredLLM(make_llm(settings))
        warm_up(llm)
    ctx = {
        "rows": rows,
        "qids": qids,
        "queries": queries,
        "qrels": qrels,
        "cands": cands,
        "todo": todo,
        "llm": llm,
        "rerankers": build_rerankers(todo, settings, embedder, llm, args.calibrator),
    }
    ctx["configs"] = {name: reranker_config(r, args.n_ctx) for name, r in ctx["rerankers"].items()}
    check_same_config(rows, ctx["configs"])
    stopped, claims_run = "", 0
    try:
        if todo:
            stopped, claims_run = run_claims(args, ctx, began)
    except KeyboardInterrupt:
        stopped = "interrupted"
    if stopped:
        log(f"stopping: {stopped}")

    report = {
        "command": shlex.join(["python", *sys.argv]),
        "dataset": "BEIR SciFact",
        "split": "test (qrels/test.tsv)",
        "seed": args.seed,
        "claims_sampled": len(qids),
        "sampling": "test qids sorted as strings, random.Random(seed).shuffle, first N",
        "depth": args.depth,
        "first_stage": cands.get("first_stage"),
        "unit": "document (each candidate = its best passage by Max-P; qrels per document)",
        "model_ids": sorted({r["model_id"] for r in rows.values() if r.get("model_id")}),
        "calibrator": args.calibrator,
        "llm_cache": not args.no_llm_cache,
        "settings": settings.model_dump(
            mode="json", include={"llm", "rerank", "retrieve", "embed", "bm25"}
        ),
        "candidates_file": str(args.cands_path),
        "rows_file": str(args.rows_path),
        "stopped": stopped or ("report only" if args.report_only else "all selected work done"),
        "claims_run_this_time": claims_run,
        "rerankers_run_this_time": todo,
        "reranker_config": report_configs(rows, ctx["configs"]),
        "results": summarize(rows, qids, qrels, cands, args.out_dir),
        "load_avg_at_start": load_start,
        "load_avg_at_end": os.getloadavg(),
        "seconds_this_run": round(time.perf_counter() - began, 1),
    }
    report["settings"]["llm"].pop("api_key", None)
    out = args.out_dir / "rerank_scifact.json"
    out.write_text(json.dumps(report, indent=2) + "\n", encoding="utf-8")
    print(json.dumps(report["results"], indent=1))


if __name__ == "__main__":
    main()
