"""Wall-clock seconds of ``sciera ask`` on claims and yes/no questions, as a user runs it: a
fresh process each time (Python, the models and the 1.5B load), the LLM response cache off
so every LLM call is paid.

Run from the repository root with the venv active (no network needed)::

    python benchmarks/ask_speed.py --corpus corpora/scifact

Questions: the README's claim and the examples the verification issue names (speed only, no
score; none is a SciFact test claim). Each is asked ``--repeats`` times; the median is
reported with the pipeline's own per-stage seconds (``--json`` trace) and what it answered.
Writes ``benchmarks/results/ask_speed.json``.
"""

from __future__ import annotations

import argparse
import json
import os
import shlex
import statistics
import subprocess
import sys
import time
from pathlib import Path

from verify_common import ROOT, log

QUESTIONS = (
    "Vitamin D deficiency raises the risk of multiple sclerosis.",
    "Aspirin reduces the risk of colorectal cancer.",
    "Does vitamin D supplementation reduce the risk of fractures in older adults?",
)


def ask_once(question: str, corpus: Path) -> dict:
    env = dict(os.environ, SCIERA_LLM__CACHE="false")
    cmd = ["sciera", "ask", question, "--corpus", str(corpus), "--json"]
    start = time.perf_counter()
    done = subprocess.run(cmd, env=env, capture_output=True, text=True, check=False)
    seconds = time.perf_counter() - start
    if done.returncode != 0:
        raise SystemExit(f"sciera ask failed ({done.returncode}): {done.stderr.strip()[-500:]}")
    answer = json.loads(done.stdout)
    stages = answer["trace"]["pipeline"]["seconds"]
    return {
        "seconds": round(seconds, 2),
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
        "command": shlex.join(["python", *sys.argv]),
        "repeats": args.repeats,
        "llm_cache": False,
        "questions": rows,
        "max_median_seconds": max(r["median_seconds"] for r in rows),
    }
    dest = ROOT / "benchmarks" / "results" / "ask_speed.json"
    dest.write_text(json.dumps(out, indent=1) + "\n")
    log(f"wrote {dest}")


if __name__ == "__main__":
    main()
