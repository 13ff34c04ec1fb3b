"""Wall-clock seconds of ``sciera ask`` on claims and yes/no questions, as a user runs it: a
fresh process each time (Python, the models and the 1.5B load), the LLM response cache off
so every LLM call is paid.

Run from the repository root with the venv active (no network needed)::

    python benchmarks/perf/ask_speed.py --corpus corpora/scifact

Questions: the README's claim and the examples the verification issue names (speed only, no
score; none is a SciFact test claim). Each is asked ``--repeats`` times; the median is
reported with the pipeline's own per-stage seconds (``--json`` trace) and what it answered.
Writes ``benchmarks/results/ask_speed.json``.
"""

from __future__ import annotations

import argparse
import json
import os
import statistics
from pathlib import Path

from common import RESULTS, ROOT, command, log, run_child, write_json

QUESTIONS = (
    "Vitamin D deficiency raises the risk of multiple sclerosis.",
    "Aspirin reduces the risk of colorectal cancer.",
    "Does vitamin D supplementation reduce the risk of fractures in older adults?",
)


def ask_once(question: str, corpus: Path) -> dict:
    env = dict(os.environ, SCIERA_LLM__CACHE="false")
    cmd = ["sciera", "ask", question, "--corpus", str(corpus), "--json"]
    done = run_child(cmd, env=env, capture=True)
    if done.returncode != 0:
        raise SystemExit(f"sciera ask failed ({done.returncode}): {done.stderr.strip()[-500:]}")
    answer = json.loads(done.stdout)
    stages = answer["trace"]["pipeline"]["seconds"]
    return {
        "seconds": round(done.seconds, 2),
        "stages": {k: round(v, 2) for k, v in stages.items()},
        "answer": (answer.get("exact") or [None])[0],
        "verdict": (answer["trace"].get("verification") or {}).get("label"),
    }


def main() -> None:
    ap = argparse.ArgumentParser(
        description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter
    )
    ap.add_argument("--corpus", type=Path, default=ROOT / "corpora" / "scifact")
    ap.add_argument("--repeats", type=int, default=2)
    args = ap.parse_args()
    rows = []
    for question in QUESTIONS:
        runs = [ask_once(question, args.corpus) for _ in range(args.repeats)]
        row = {
            "question": question,
            "median_seconds": round(statistics.median(r["seconds"] for r in runs), 2),
            "runs": runs,
        }
        rows.append(row)
        log(f"{row['median_seconds']:.1f} s  {runs[0]['answer']}  {question}")
    out = {
        "command": command(),
        "repeats": args.repeats,
        "llm_cache": False,
        "questions": rows,
        "max_median_seconds": max(r["median_seconds"] for r in rows),
    }
    log(f"wrote {write_json(RESULTS / 'ask_speed.json', out)}")


if __name__ == "__main__":
    main()
