"""Does the research agent reuse the KV cache of its growing conversation? Read from the
traces of an agent pipeline run by `sciera eval run` (no LLM call here).

    python benchmarks/research_kv_reuse.py benchmarks/results/research_scifact_eval --pipeline agent

Each step's LLM seconds are fitted by least squares two ways: on the tokens the step added
to the conversation (prompt tokens minus the previous step's prompt and reply) plus its
reply tokens, and on its whole prompt plus its reply tokens. With llama.cpp's prefix reuse
the first explains the time and the whole prompt does not; without it, time follows the
whole prompt. Steps served from the response cache are left out (their seconds are the
original call's). Writes benchmarks/results/research_kv_reuse.json.
"""

from __future__ import annotations

import argparse
import json
import shlex
import sys
from pathlib import Path

import numpy as np

ROOT = Path(__file__).resolve().parents[1]


def fit(a: np.ndarray, y: np.ndarray) -> dict:
    coef, *_ = np.linalg.lstsq(a, y, rcond=None)
    pred = a @ coef
    r2 = 1 - float(((y - pred) ** 2).sum()) / float(((y - y.mean()) ** 2).sum())
    return {
        "seconds_per_prompt_token": float(coef[0]),
        "seconds_per_reply_token": float(coef[1]),
        "intercept": float(coef[2]),
        "r2": r2,
    }


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__)
    ap.add_argument("results", type=Path)
    ap.add_argument("--pipeline", default="agent")
    ap.add_argument("--out", type=Path, default=ROOT / "benchmarks/results/research_kv_reuse.json")
    args = ap.parse_args()
    from sciera.eval.resultlog import read_log

    log = args.results / "runs" / args.pipeline / "r0" / "results.jsonl"  # or its .gz
    rows = list(read_log(log).values())
    new, whole, y = [], [], []
    for r in rows:
        prev = 0
        for s in r.get("trace", []):
            if s["prompt_tokens"] == 0:
                continue
            added = s["prompt_tokens"] - prev
            prev = s["prompt_tokens"] + s["completion_tokens"]
            if s["seconds"] < 0.05:  # a response-cache hit
                continue
            new.append([added, s["completion_tokens"], 1.0])
            whole.append([s["prompt_tokens"], s["completion_tokens"], 1.0])
            y.append(s["seconds"])
    a_new, a_whole, yy = np.array(new), np.array(whole), np.array(y)
    out = {
        "command": shlex.join(["python", *sys.argv]),
        "questions": len(rows),
        "steps": len(yy),
        "mean_prompt_tokens": float(a_whole[:, 0].mean()),
        "mean_added_tokens": float(a_new[:, 0].mean()),
        "mean_seconds": float(yy.mean()),
        "fit_on_added_tokens": fit(a_new, yy),
        "fit_on_whole_prompt": fit(a_whole, yy),
    }
    args.out.write_text(json.dumps(out, indent=1) + "\n")
    print(json.dumps(out, indent=1))


if __name__ == "__main__":
    main()
