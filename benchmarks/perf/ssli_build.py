"""A real SciRAG-SSLI build on SciFact -> benchmarks/results/ssli_build.json.

Runs (or resumes) ``sciera dataset build`` through the library on an ingested and
indexed SciFact corpus directory, then records seconds per question, LLM calls and
tokens per step, and the rejection counts from ``stats.json``.

    sciera ingest ../shared/data/scifact --corpus /tmp/ssli-work/scifact
    sciera index --corpus /tmp/ssli-work/scifact
    python benchmarks/perf/ssli_build.py --corpus /tmp/ssli-work/scifact \\
        --out /tmp/ssli-work/build --max-questions 5 [--mode ours] [--n-docs 10]

The machine is shared: the load average before and after is recorded.
"""

from __future__ import annotations

import argparse
import json
import time
from pathlib import Path

from common import RESULTS, command, loadavg, machine, write_json
from sciera.datasets.ssli.builder import SSLIBuilder
from sciera.datasets.ssli.config import BuildConfig
from sciera.settings import load_settings


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--corpus", type=Path, required=True)
    parser.add_argument("--out", type=Path, required=True)
    parser.add_argument("--mode", default="ours")
    parser.add_argument("--n-docs", type=int, default=10)
    parser.add_argument("--max-questions", type=int, default=5)
    parser.add_argument("--n-distractors", type=int, default=6)
    parser.add_argument("--pool", type=int, default=1000)
    parser.add_argument("--seed", type=int, default=0)
    parser.add_argument("--result", type=Path, default=RESULTS / "ssli_build.json")
    args = parser.parse_args()

    config = BuildConfig(
        mode=args.mode,
        n_docs=args.n_docs,
        max_questions=args.max_questions,
        n_distractors=args.n_distractors,
        pool=args.pool or None,
        seed=args.seed,
    )
    settings = load_settings()
    load_before = loadavg()
    t0 = time.perf_counter()
    stats = SSLIBuilder(args.corpus, args.out, config, settings=settings).run()
    seconds = time.perf_counter() - t0
    report = {
        "command": command(),
        "llm_model": settings.llm.model,
        "embedder": settings.embed.backend,
        "config": config.to_dict(),
        "wall_seconds_this_run": round(seconds, 1),
        "questions": stats["questions"],
        "seconds_per_question": stats["seconds_per_question"],
        "stats": stats,
        "load_before": load_before,
        "load_after": loadavg(),
        "machine": machine(),
    }
    write_json(args.result, report, indent=2)
    print(json.dumps({k: report[k] for k in ("questions", "seconds_per_question")}))


if __name__ == "__main__":
    main()
