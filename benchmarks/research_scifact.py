"""The research agent against single-shot ``ask`` on SciFact claims whose evidence is spread
over two or more abstracts, same questions, same run, same LLM (resumable per question).

Run from the repository root with the venv active (no network needed)::

    python benchmarks/research_scifact.py --corpus corpora/scifact --limit-minutes 20

Questions: the SciFact test claims with at least two cited abstracts in
``qrels/test.tsv`` (23 of 300), in a seeded order; nothing here was trained on them. Both
systems run on the default settings (hybrid first stage, DeepEra with the shipped
cross-encoder for ``ask``); the agent gets ``--max-steps`` turns and no reranker.

Per question: evidence recall (share of the claim's cited abstracts among the documents
retrieved over all calls, Max-P: a passage counts for its document), for ``ask`` from its
one retrieval cut to the 5 passages an agent search shows (``ask@5``) and from its 30
candidates (``ask@30``); the share of cited abstracts among the passages each answer rests
on (its evidence); search calls, LLM tokens, seconds, and how the agent stopped. The agent
is paired against ``ask@5`` (one search of the same size) on evidence recall with Fisher's
randomization test. Rows go to ``benchmarks/results/research_scifact.jsonl`` as they are
measured (a rerun skips the questions done); the summary to ``research_scifact.json``.
"""

from __future__ import annotations

import argparse
import json
import random
import shlex
import sys
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
DATA = ROOT.parent / "shared" / "data"
RESULTS = ROOT / "benchmarks" / "results"


def log(msg: str) -> None:
    print(f"{time.strftime('%H:%M:%S')} {msg}", file=sys.stderr, flush=True)


def doc(passage_id: str) -> str:
    return passage_id.split("#", 1)[0]


def recall(found: set[str], gold: set[str]) -> float:
    return len(found & gold) / len(gold)


def questions(seed: int) -> list[tuple[str, str, set[str]]]:
    from sciera.corpus import load_beir_queries, load_qrels

    qrels = load_qrels(DATA / "scifact" / "qrels" / "test.tsv")
    texts = load_beir_queries(DATA / "scifact" / "queries.jsonl")
    rows = [(q, texts[q], set(d)) for q, d in sorted(qrels.items()) if len(d) >= 2 and q in texts]
    random.Random(seed).shuffle(rows)
    return rows


def measure_ask(pipe, question: str, gold: set[str]) -> dict:
    t0 = time.perf_counter()
    answer = pipe.run(question)
    info = answer.trace["pipeline"]
    ranked = sorted(info["candidates"], key=lambda r: r["first_stage_rank"])
    docs = [doc(r["passage_id"]) for r in ranked]
    return {
        "recall@5": recall(set(docs[:5]), gold),
        "recall@30": recall(set(docs), gold),
        "evidence_recall": recall({doc(e.passage.passage_id) for e in answer.evidence}, gold),
        "answer": answer.text,
        "insufficient": answer.insufficient,
        "search_calls": 1,
        "seconds": time.perf_counter() - t0,
    }


def measure_agent(llm, corpus: Path, settings, options, question: str, gold: set[str]) -> dict:
    from sciera.research.api import build_agent

    t0 = time.perf_counter()
    run = build_agent(corpus, settings, llm, options).run(question)
    found = {doc(pid) for s in run.steps for pid in s.result_ids}
    return {
        "recall": recall(found, gold),
        "evidence_recall": recall({doc(e.passage.passage_id) for e in run.answer.evidence}, gold),
        "answer": run.answer.text,
        "insufficient": run.answer.insufficient,
        "search_calls": run.search_calls,
        "distinct_queries": len({s.query.casefold() for s in run.steps if s.action == "search"}),
        "steps": len(run.steps),
        "stopped_by": run.stopped_by,
        "prompt_tokens": run.prompt_tokens,
        "completion_tokens": run.completion_tokens,
        "seconds": time.perf_counter() - t0,
    }


def summarize(rows: list[dict]) -> dict:
    from sciera.eval.significance import paired_randomization

    n = len(rows)
    if not n:
        return {"questions": 0}

    def mean(f) -> float:
        return sum(f(r) for r in rows) / n

    stops: dict[str, int] = {}
    for r in rows:
        stops[r["agent"]["stopped_by"]] = stops.get(r["agent"]["stopped_by"], 0) + 1
    test = paired_randomization(
        [r["ask"]["recall@5"] for r in rows], [r["agent"]["recall"] for r in rows]
    )
    return {
        "questions": n,
        "ask": {
            "recall@5": mean(lambda r: r["ask"]["recall@5"]),
            "recall@30": mean(lambda r: r["ask"]["recall@30"]),
            "evidence_recall": mean(lambda r: r["ask"]["evidence_recall"]),
            "insufficient": mean(lambda r: float(r["ask"]["insufficient"])),
            "seconds": mean(lambda r: r["ask"]["seconds"]),
        },
        "agent": {
            "recall": mean(lambda r: r["agent"]["recall"]),
            "evidence_recall": mean(lambda r: r["agent"]["evidence_recall"]),
            "insufficient": mean(lambda r: float(r["agent"]["insufficient"])),
            "search_calls": mean(lambda r: r["agent"]["search_calls"]),
            "distinct_queries": mean(lambda r: r["agent"]["distinct_queries"]),
            "completion_rate": stops.get("answer", 0) / n,
            "stopped_by": stops,
            "tokens": mean(lambda r: r["agent"]["prompt_tokens"] + r["agent"]["completion_tokens"]),
            "seconds": mean(lambda r: r["agent"]["seconds"]),
        },
        # A = ask's one search of 5 passages, B = the agent over all its searches
        "agent_vs_ask@5_recall": test.as_dict(),
    }


def main() -> None:
    ap = argparse.ArgumentParser(
        description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter
    )
    ap.add_argument("--corpus", type=Path, default=ROOT / "corpora" / "scifact")
    ap.add_argument("--max-steps", type=int, default=6)
    ap.add_argument("--seed", type=int, default=0)
    ap.add_argument("--limit-minutes", type=float, default=60.0)
    ap.add_argument("--out", type=Path, default=RESULTS / "research_scifact.json")
    args = ap.parse_args()
    from sciera.llm.registry import make_llm
    from sciera.pipeline import Pipeline
    from sciera.research.api import RESEARCH_N_CTX, ResearchOptions
    from sciera.settings import load_settings

    settings = load_settings(llm={"n_ctx": RESEARCH_N_CTX})  # as `sciera research` runs
    llm = make_llm(settings)
    pipe = Pipeline.from_settings(args.corpus, settings, llm=llm)
    options = ResearchOptions(max_steps=args.max_steps)
    jsonl = args.out.with_suffix(".jsonl")
    from sciera.eval.resultlog import unpack_for_append

    done = {}
    if unpack_for_append(jsonl).is_file():  # a packed (.gz) log goes on as a plain one
        done = {r["qid"]: r for r in map(json.loads, jsonl.read_text().splitlines())}
    todo = questions(args.seed)
    deadline = time.monotonic() + args.limit_minutes * 60
    with jsonl.open("a", encoding="utf-8") as out:
        for i, (qid, text, gold) in enumerate(todo, start=1):
            if qid in done:
                continue
            if time.monotonic() > deadline:
                log(f"time limit: {len(done)} of {len(todo)} questions done; rerun to go on")
                break
            row = {
                "qid": qid,
                "question": text,
                "gold": sorted(gold),
                "ask": measure_ask(pipe, text, gold),
                "agent": measure_agent(llm, args.corpus, settings, options, text, gold),
            }
            out.write(json.dumps(row, ensure_ascii=False) + "\n")
            out.flush()
            done[qid] = row
            a, g = row["ask"], row["agent"]
            log(
                f"{i}/{len(todo)} {qid}: ask@5 {a['recall@5']:.2f} agent {g['recall']:.2f} "
                f"({g['search_calls']} searches, {g['stopped_by']}, {g['seconds']:.0f} s)"
            )
    rows = [done[q] for q, _, _ in todo if q in done]
    summary = {
        "command": shlex.join(["python", *sys.argv]),
        "questions_available": len(todo),
        "max_steps": args.max_steps,
        **summarize(rows),
    }
    args.out.write_text(json.dumps(summary, indent=1) + "\n")
    print(json.dumps(summary, indent=1))


if __name__ == "__main__":
    main()
