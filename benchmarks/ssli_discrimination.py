"""Does DeepEra's judge tell a gold passage from its SSLI distractors? (issues 4 and 6)

    python benchmarks/ssli_discrimination.py --dataset /path/to/ssli-build-folder

The SSLI setting of a dataset from ``sciera dataset build``: each question's pool holds its
gold passage(s) and distractors the LLM wrote to be on-topic but not to answer it. CDR
(SPEC: share of (gold, distractor) pairs of a question with the gold ranked above the
distractor, pooled over pairs) is measured for
- BM25 (IDF over the pool) and MiniLM cosine, ranking each whole pool (as
  ``benchmarks/experiments/ssli_scifact.yaml`` does), and
- the DeepEra relevance judge with the embedded LLM: intent, then every gold passage and
  distractor assessed (E[grade]/10 and P(yes), the features DeepEra's calibrator reads).
  Other pool passages are not graded: the judge scores each passage alone, so the order
  of a gold passage and a distractor does not depend on them, and the CDR is the one a
  whole-pool run would give. A tie is counted against the gold passage. The calibrator
  shipped for DeepEra also reads first-stage rank and score, which a pool has no
  meaningful version of, so the raw scores are reported (a grade-only calibrator is
  monotone in the grade: the same CDR).
Also: mean score of gold vs distractors by distractor type, and what a raw-score filter
at each tau keeps. Per-question LLM results are appended to
``benchmarks/results/ssli_discrimination_rows.jsonl`` (resumable); the report is
``benchmarks/results/ssli_discrimination.json``.
"""

from __future__ import annotations

import argparse
import hashlib
import json
import os
import shlex
import signal
import statistics
import sys
import time
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parents[1]
RESULTS = ROOT / "benchmarks" / "results"
TAUS = (0.5, 0.6, 0.7, 0.8, 0.9)


def log(msg: str) -> None:
    print(f"{time.strftime('%H:%M:%S')} {msg}", file=sys.stderr, flush=True)


def load_ssli_setting(path: Path) -> tuple[Any, dict[str, dict[str, str]]]:
    """The SSLI setting as an EvalDataset, and per question {distractor passage id: its
    TargetType (misleading, background, ...)}, which the EvalDataset does not keep."""
    from sciera.datasets.loaders import from_instances
    from sciera.datasets.ssli.io import load_ssli as read_instances

    instances = read_instances(path, setting="ssli")
    types = {
        inst.id: {c.passage_id: c.distractor_type for c in inst.candidates if c.is_distractor}
        for inst in instances
    }
    return from_instances(path.stem, instances), types


def judge_question(llm: Any, question: str, passages: list, max_words: int) -> dict[str, Any]:
    from sciera.rerank.deepera.assess import assess_passage
    from sciera.rerank.deepera.intent import recognize_intent

    t0 = time.perf_counter()
    intent = recognize_intent(llm, question)
    scored = {}
    for p in passages:
        a = assess_passage(llm, question, intent.intent, p, max_words=max_words, with_yes=True)
        scored[p.passage_id] = {
            "grade": a.grade_expectation,
            "p_yes": a.p_yes,
            "parse_failed": a.parse_failed,
            "prompt_tokens": a.prompt_tokens,
        }
    return {
        "intent": intent.intent.intent,
        "intent_fallback": intent.fallback,
        "scores": scored,
        "seconds": time.perf_counter() - t0,
    }


def ranked_by(scores: dict[str, float], gold: set[str]) -> list[str]:
    """Best first; on a tie the distractor goes first (a tie is not a discrimination)."""
    return sorted(scores, key=lambda pid: (-scores[pid], pid in gold))


def pooled_cdr(ds: Any, ranked: dict[str, list[str]], qids: list[str]) -> float:
    """The evaluator's CDR (pooled over pairs) of ``ranked`` on ``qids``; NaN for none."""
    from sciera.eval.metrics.evaluate import evaluate

    if not qids:
        return float("nan")
    run = {q: ranked[q] for q in qids}
    qrels = {q: ds.qrels[q] for q in qids}
    return round(evaluate(run, qrels, ["cdr"], distractors=ds.distractors)["cdr"], 4)


def pool_rankings(ds: Any, qids: list[str]) -> dict[str, dict[str, list[str]]]:
    """BM25 and MiniLM cosine over each whole pool (no LLM)."""
    from sciera.rerank.registry import make_reranker
    from sciera.settings import load_settings
    from sciera.types import Ranking, ScoredPassage

    settings = load_settings(embed={"backend": "minilm"})
    out: dict[str, dict[str, list[str]]] = {}
    for name in ("bm25", "embedding"):
        reranker = make_reranker(name, settings)
        out[name] = {}
        for qid in qids:
            items = tuple(ScoredPassage(p, 0.0, i + 1) for i, p in enumerate(ds.candidates[qid]))
            ranked = reranker.rerank(ds.queries[qid], Ranking(ds.queries[qid], items, "pool"))
            out[name][qid] = [it.passage.passage_id for it in ranked]
    return out


def score_stats(rows: dict[str, dict], done: list[str], gold: dict[str, set[str]]) -> dict:
    """Mean judge scores of gold passages and of each distractor type; raw-grade filter."""
    by_role: dict[str, dict[str, list[float]]] = {}
    kept = {f"{tau:.1f}": {"gold_kept": 0, "distractors_kept": 0} for tau in TAUS}
    for q in done:
        types = rows[q]["distractor_types"]
        for pid, v in rows[q]["scores"].items():
            is_gold = pid in gold[q]
            role = "gold" if is_gold else f"distractor:{types.get(pid) or '?'}"
            for feature in ("grade", "p_yes"):
                by_role.setdefault(role, {}).setdefault(feature, []).append(v[feature])
            for tau in TAUS:
                if v["grade"] >= tau:
                    kept[f"{tau:.1f}"]["gold_kept" if is_gold else "distractors_kept"] += 1
    means = {
        role: {f: round(statistics.fmean(v), 3) for f, v in feats.items()}
        | {"n": len(feats["grade"])}
        for role, feats in sorted(by_role.items())
    }
    return {"mean_by_role": means, "raw_grade_filter": kept}


def summarize(ds: Any, qids: list[str], rows: dict[str, dict], pools: dict) -> dict[str, Any]:
    gold = {q: {p for p, g in ds.qrels[q].items() if g > 0} for q in qids}
    done = [q for q in qids if q in rows]
    cdr: dict[str, Any] = {
        f"{name} (all {len(qids)} questions)": pooled_cdr(ds, r, qids) for name, r in pools.items()
    }
    cdr |= {name: pooled_cdr(ds, r, done) for name, r in pools.items()}
    for feature in ("grade", "p_yes"):
        judged = {
            q: ranked_by({pid: v[feature] for pid, v in rows[q]["scores"].items()}, gold[q])
            for q in done
        }
        cdr[f"deepera_{feature}"] = pooled_cdr(ds, judged, done)
    return {
        "questions": len(qids),
        "questions_judged": len(done),
        "gold_passages": sum(len(gold[q]) for q in done),
        "distractors": sum(len(ds.distractors[q]) for q in done),
        "cdr": cdr,
        **score_stats(rows, done, gold),
        "seconds_per_question": (
            round(statistics.fmean(rows[q]["seconds"] for q in done), 1) if done else None
        ),
        "intent_fallbacks": sum(rows[q]["intent_fallback"] for q in done),
        "parse_failures": sum(v["parse_failed"] for q in done for v in rows[q]["scores"].values()),
    }


def judged_passages(ds: Any, q: str) -> list:
    """The passages the judge grades for ``q``: its gold passages and its distractors."""
    judged = {p for p, g in ds.qrels[q].items() if g > 0} | set(ds.distractors[q])
    return [p for p in ds.candidates[q] if p.passage_id in judged]


def pool_key(question: str, passages: list) -> str:
    """What a row judged: the question text and its judged passages' ids and texts. A row
    is reused only for the same key, so a rebuilt dataset (same question ids, other
    questions or distractors) is judged again instead of inheriting stale grades."""
    h = hashlib.sha256(question.encode("utf-8"))
    for p in sorted(passages, key=lambda p: p.passage_id):
        h.update(f"\0{p.passage_id}\0{p.contents}".encode())
    return h.hexdigest()[:16]


def read_rows(path: Path) -> dict[str, dict]:
    from sciera.eval.resultlog import is_stored, read_text

    rows: dict[str, dict] = {}
    if is_stored(path):  # the plain file or its packed .gz
        for line in read_text(path).splitlines():
            try:
                r = json.loads(line)
            except json.JSONDecodeError:  # a line cut by a kill: judge that question again
                continue
            rows[r["qid"]] = r
    return rows


def judge_pending(
    args: argparse.Namespace, ds: Any, types: dict, pending: list[str], rows: dict
) -> str:
    """Judge each pending question, appending its row; returns why it stopped early."""
    from sciera.llm.registry import make_llm
    from sciera.settings import load_settings

    llm = make_llm(load_settings())
    began = time.perf_counter()
    from sciera.eval.resultlog import unpack_for_append

    with unpack_for_append(args.rows_path).open("a", encoding="utf-8") as fh:
        for n, q in enumerate(pending):
            if (
                args.limit_minutes is not None
                and time.perf_counter() - began >= 60 * args.limit_minutes
            ):
                return f"time budget of {args.limit_minutes} min reached"
            passages = judged_passages(ds, q)
            rec = judge_question(llm, ds.queries[q], passages, args.max_words)
            key = pool_key(ds.queries[q], passages)
            rec.update(qid=q, pool_key=key, model_id=llm.model_id, distractor_types=types[q])
            fh.write(json.dumps(rec) + "\n")
            fh.flush()
            rows[q] = rec
            log(f"[{n + 1}/{len(pending)}] {q}: {len(passages)} judged, {rec['seconds']:.0f}s")
    return ""


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawTextHelpFormatter)
    ap.add_argument("--dataset", type=Path, required=True, help="a `sciera dataset build` folder")
    ap.add_argument("--max-words", type=int, default=200, help="passage words the judge reads")
    ap.add_argument("--limit-minutes", type=float, help="start no new question after this")
    ap.add_argument("--out-dir", type=Path, default=RESULTS)
    args = ap.parse_args()
    os.environ.setdefault("HF_HUB_OFFLINE", "1")
    signal.signal(signal.SIGTERM, signal.default_int_handler)

    ds, types = load_ssli_setting(args.dataset)
    qids = [q for q in ds.qids if ds.distractors[q]]
    args.rows_path = args.out_dir / "ssli_discrimination_rows.jsonl"
    rows = read_rows(args.rows_path)
    stale = [
        q
        for q in qids
        if q in rows and rows[q].get("pool_key") != pool_key(ds.queries[q], judged_passages(ds, q))
    ]
    rows = {q: r for q, r in rows.items() if q in qids and q not in stale}
    pending = [q for q in qids if q not in rows]
    stopped = ""
    try:
        if pending:
            stopped = judge_pending(args, ds, types, pending, rows)
    except KeyboardInterrupt:
        stopped = "interrupted"
    report = {
        "command": shlex.join(["python", *sys.argv]),
        "dataset": str(args.dataset),
        "setting": "ssli",
        "model_ids": sorted({r["model_id"] for r in rows.values()}),
        "stopped": stopped or "all questions judged",
        "stale_rows_judged_again": len(stale),
        **summarize(ds, qids, rows, pool_rankings(ds, qids)),
    }
    (args.out_dir / "ssli_discrimination.json").write_text(json.dumps(report, indent=2) + "\n")
    print(json.dumps(report["cdr"], indent=1))


if __name__ == "__main__":
    main()
