"""Speed of the embedded LLM backend on this machine -> benchmarks/results/llm_speed.json.

For each registered model:
- prompt and generation tokens/s (threads=2), and prompt tokens/s with threads=1;
- time to grade 30 SciFact passages (BM25 top-30 for one test claim, each cut to 250 words)
  with ``choice_logprobs`` over grades "0".."10", with KV prefix reuse (claim first,
  passage last) and without it (cache cleared before every call), and the speedup;
- the persistent response cache: the same 30 calls again through ``CachedLLM`` (all hits).

    python benchmarks/perf/llm_speed.py [--models NAME ...] [--passages 30]

The machine is shared: the load average before and after each model is recorded.
"""

from __future__ import annotations

import argparse
import json
import statistics
import tempfile
import time
from pathlib import Path
from typing import Any

import bm25s
import Stemmer

from common import DATA, RESULTS, command, loadavg, log, machine, write_json
from sciera.llm.base import Message
from sciera.llm.cache import CachedLLM
from sciera.llm.llamacpp import SPEED_PROMPT, LlamaCppLLM
from sciera.llm.weights import registered_models, resolve_model
from sciera.settings import Settings

SCIFACT = DATA / "scifact"
GRADES = [str(i) for i in range(11)]
SYSTEM = (
    "You grade evidence for scientific claims. Given a claim and a passage, rate from 0 to 10 "
    "how directly the passage supports or refutes the claim with mechanistic, causal or "
    "data-driven evidence (0 = unrelated, 10 = direct evidence). Reply with the number only."
)


def claim_and_passages(n: int) -> tuple[str, list[str]]:
    """The first SciFact test claim and its BM25 top-n abstracts (title + text, 250 words)."""
    first_qid = (SCIFACT / "qrels" / "test.tsv").read_text().splitlines()[1].split("\t")[0]
    lines = (SCIFACT / "queries.jsonl").read_text().splitlines()
    claims = {q["_id"]: q["text"] for q in map(json.loads, lines)}
    docs = [json.loads(line) for line in (SCIFACT / "corpus.jsonl").read_text().splitlines()]
    texts = [f"{d['title']}\n{d['text']}" for d in docs]
    stemmer = Stemmer.Stemmer("english")
    index = bm25s.BM25(k1=0.9, b=0.4)
    tokens = bm25s.tokenize(texts, stopwords="en", stemmer=stemmer, show_progress=False)
    index.index(tokens, show_progress=False)
    query = bm25s.tokenize(
        [claims[first_qid]], stopwords="en", stemmer=stemmer, show_progress=False
    )
    ids, _ = index.retrieve(query, k=n, show_progress=False)
    return claims[first_qid], [" ".join(texts[i].split(" ")[:250]) for i in ids[0]]


def grade_messages(claim: str, passage: str) -> list[Message]:
    return [
        Message("system", SYSTEM),
        Message("user", f"Claim: {claim}\n\nPassage: {passage}\n\nGrade (0-10):"),
    ]


def score_all(llm: Any, claim: str, passages: list[str]) -> tuple[float, list[float]]:
    log(f"  scoring {len(passages)} passages with {type(llm).__name__}")
    start = time.perf_counter()
    grades = [llm.choice_logprobs(grade_messages(claim, p), GRADES).expected() for p in passages]
    return time.perf_counter() - start, grades


def bench_model(name: str, home: Path, claim: str, passages: list[str]) -> dict[str, Any]:
    resolved = resolve_model(name, home)
    load_before = loadavg()[0]
    row: dict[str, Any] = {"model": name, "model_id": resolved.model_id}

    def load(**kw: Any) -> LlamaCppLLM:
        return LlamaCppLLM(resolved.path, model_id=resolved.model_id, threads=2, **kw)

    start = time.perf_counter()
    llm = load()
    row["load_seconds"] = round(time.perf_counter() - start, 2)
    speed = llm.measure_speed(SPEED_PROMPT, gen_tokens=32)
    row["threads2"] = {
        "prompt_tokens": speed.prompt_tokens,
        "prompt_tok_s": round(speed.prompt_tps, 1),
        "gen_tokens": speed.gen_tokens,
        "gen_tok_s": round(speed.gen_tps, 2),
    }

    cache_dir = Path(tempfile.mkdtemp(prefix="sciera-llm-bench-"))
    cached = CachedLLM(llm, cache_path=cache_dir / "cache.sqlite")
    before = llm.evaluated_tokens
    reuse_s, reuse_grades = score_all(cached, claim, passages)  # all misses: real model calls
    evaluated_reuse = llm.evaluated_tokens - before
    hit_s, hit_grades = score_all(cached, claim, passages)  # all hits
    assert hit_grades == reuse_grades and cached.hits == len(passages)
    llm.close()

    plain = load(prefix_reuse=False)
    before = plain.evaluated_tokens
    plain_s, plain_grades = score_all(plain, claim, passages)
    evaluated_plain = plain.evaluated_tokens - before
    plain.close()

    one = LlamaCppLLM(resolved.path, model_id=resolved.model_id, threads=1)
    speed1 = one.measure_speed(SPEED_PROMPT, gen_tokens=8)
    row["threads1"] = {
        "prompt_tokens": speed1.prompt_tokens,
        "prompt_tok_s": round(speed1.prompt_tps, 1),
        "gen_tok_s": round(speed1.gen_tps, 2),
    }
    one.close()

    n = len(passages)
    row["score_passages"] = {
        "passages": n,
        "with_prefix_reuse_s": round(reuse_s, 2),
        "without_prefix_reuse_s": round(plain_s, 2),
        "speedup": round(plain_s / reuse_s, 3),
        "prompt_tokens_evaluated_with_reuse": evaluated_reuse,
        "prompt_tokens_evaluated_without_reuse": evaluated_plain,
        "per_passage_with_reuse_s": round(reuse_s / n, 3),
        "max_abs_grade_difference": round(
            max(abs(a - b) for a, b in zip(reuse_grades, plain_grades, strict=True)), 4
        ),
        "mean_expected_grade": round(statistics.mean(reuse_grades), 3),
    }
    row["response_cache"] = {
        "miss_pass_s": round(reuse_s, 2),
        "hit_pass_s": round(hit_s, 4),
        "speedup": round(reuse_s / hit_s, 1),
    }
    row["loadavg_before_after"] = [load_before, loadavg()[0]]
    return row


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--models", nargs="*", default=list(registered_models()))
    parser.add_argument("--passages", type=int, default=30)
    parser.add_argument("--out", type=Path, default=RESULTS / "llm_speed.json")
    args = parser.parse_args()

    home = Settings().home
    claim, passages = claim_and_passages(args.passages)
    results = {
        "command": command(),
        "machine": machine(),
        "claim": claim,
        "models": [],
    }
    for name in args.models:
        log(f"benchmarking {name} ...")
        results["models"].append(bench_model(name, home, claim, passages))
        log(json.dumps(results["models"][-1], indent=1))
        write_json(args.out, results)  # after each model
    log(f"wrote {args.out}")


if __name__ == "__main__":
    main()
