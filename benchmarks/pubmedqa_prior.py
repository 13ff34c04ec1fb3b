"""Would contextual calibration change PubMedQA yes/no/maybe decisions? Re-decided offline.

Run from the repository root after ``pubmedqa_answer.py`` (no network needed)::

    HF_HUB_OFFLINE=1 python benchmarks/pubmedqa_prior.py \
        [--results benchmarks/results/pubmedqa_answer.json]

Reads the answer rows of that run's configuration (the JSONL it names), computes the
model's yes/no/maybe prior on content-free inputs exactly as ``sciera ask --yesno-prior
content_free`` does (three choice-probability calls; :mod:`sciera.generate.prior`), and
re-decides every answer from its recorded probabilities divided by that prior. Reports,
per setting and extractor over the run's paired questions, accuracy and macro-F1 raw and
with the prior, to ``benchmarks/results/pubmedqa_prior.json``. Refusals stay refusals.
"""

from __future__ import annotations

import argparse
import json
import os
import sys
from collections.abc import Sequence
from pathlib import Path
from typing import Any

sys.path.insert(0, str(Path(__file__).resolve().parent))
from pubmedqa_answer import LABELS, ROOT, load_done


def redecide(rows: Sequence[dict[str, Any]], prior: dict[str, float]) -> list[str]:
    """Each row's decision from its recorded probabilities divided by ``prior``."""
    from sciera.generate.prior import apply_prior

    out = []
    for r in rows:
        if not r["probs"]:  # refused or degraded: no decision to re-make
            out.append(r["pred"])
            continue
        p = apply_prior(r["probs"], prior)
        out.append(max(LABELS, key=lambda o: (p.get(o, 0.0), -LABELS.index(o))))
    return out


def scores(gold: Sequence[str], pred: Sequence[str]) -> dict[str, float]:
    from sciera.eval.metrics.bioasq import macro_f1

    acc = sum(g == p for g, p in zip(gold, pred, strict=True)) / len(gold)
    return {"accuracy": acc, "macro_f1": macro_f1(gold, pred, LABELS)}


def main(argv: Sequence[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument(
        "--results", type=Path, default=ROOT / "benchmarks/results/pubmedqa_answer.json"
    )
    ap.add_argument("--out", type=Path, default=ROOT / "benchmarks/results/pubmedqa_prior.json")
    args = ap.parse_args(argv)
    os.environ.setdefault("HF_HUB_OFFLINE", "1")
    from sciera.generate.llm import LLMGenerator
    from sciera.llm.registry import make_llm
    from sciera.settings import load_settings

    run = json.loads(args.results.read_text(encoding="utf-8"))
    cfg = run["config"]
    done = load_done(Path(cfg["jsonl"]), cfg["key"])
    settings = load_settings(None)
    llm = make_llm(settings)
    if llm.model_id != run["model"]:
        raise SystemExit(f"{args.results}: rows are from {run['model']}, not {llm.model_id}")
    gen = LLMGenerator.from_settings(
        settings, llm=llm, allow_maybe=True, yesno_prior="content_free"
    )
    prior = gen.content_free_prior()
    report: dict[str, Any] = {}
    for setting, per in run["results"].items():
        qs = [p for p in run["subset"]["pmids"] if all((setting, n, p) in done for n in per)]
        report[setting] = {"n": len(qs)}
        for name in per:
            rows = [done[(setting, name, p)] for p in qs]
            gold = [r["gold"] for r in rows]
            report[setting][name] = {
                "raw": scores(gold, [r["pred"] for r in rows]),
                "content_free_prior": scores(gold, redecide(rows, prior)),
            }
    out = {
        "benchmark": "pubmedqa_prior",
        "results_from": str(args.results.name),
        "model": llm.model_id,
        "prior": prior,
        "results": report,
    }
    args.out.write_text(json.dumps(out, indent=2) + "\n", encoding="utf-8")
    print(json.dumps(out, indent=1))
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
