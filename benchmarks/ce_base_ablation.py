"""Dev-split ablation of trained cross-encoders: which start (MiniLM-L6 or
multilingual-e5-small), which training max length, ...: the models' raw logits, paired.

Run from the repository root with the venv active, after training the models at the same
budget (the commands are in the README rows "base model" and "training max length")::

    python benchmarks/ce_base_ablation.py --models ce-base-minilm ce-base-e5-enpt
    python benchmarks/ce_base_ablation.py --models ce-len256 ce-len384 scifact-minilm \
        --out benchmarks/results/ce_length_ablation/ablation.json

The first model's dev split is rebuilt from its card (as ``sciera train recalibrate``
does); every other model must have held out each of those claims (its dev split the same
or, trained without ``--max-queries``, larger). Every dev claim's first-stage candidates
are scored by each model's raw logit at the max length its card records, never the
calibrators fitted on these same claims. Per claim: nDCG@10 and hit@1 of the logit order
and of the first stage; the models are paired against the first model (randomization test
on nDCG@10, exact McNemar on hit@1) and against the first stage. No test claim is read.
Also recorded: each card's training time, steps and in-sample dev metrics, the parameter
count, and the seconds to score one claim's candidates (fp32, this machine). Writes
``--out`` (default ``benchmarks/results/ce_base_ablation/ablation.json``).
"""

from __future__ import annotations

import argparse
import json
import shlex
import sys
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]


def paired(a: dict, b: dict) -> dict:
    from sciera.eval.significance import mcnemar_exact, paired_randomization

    qids = sorted(a)
    nd = paired_randomization([a[q]["ndcg@10"] for q in qids], [b[q]["ndcg@10"] for q in qids])
    hit = mcnemar_exact([a[q]["hit@1"] == 1 for q in qids], [b[q]["hit@1"] == 1 for q in qids])
    return {
        "queries": len(qids),
        "ndcg@10": {"diff": nd.mean_diff, "p": nd.p_value},
        "hit@1": {
            "diff": hit.mean_diff,
            "p": hit.p_value,
            "gained": hit.b_only,
            "lost": hit.a_only,
        },
    }


def held_out_missing(dev_ids: list[str], card: dict) -> list[str]:
    """The first model's dev claims that ``card``'s model did not hold out. A later model
    pairs on the first one's dev claims, so its own dev split must contain them all: the
    same split, or a larger one (``--max-queries N`` keeps at most the first N // 4, so
    a short run pairs with a model trained on all claims, such as the one it started from)."""
    held_out = set(card["data"]["dev_qids"])
    return [q for q in dev_ids if q not in held_out]


def pair_lengths(tokenizer, dev, texts: dict, max_length: int) -> dict:
    """How long the dev (claim, passage) pairs are in ``tokenizer``'s tokens, special
    tokens included, and the share a model of ``max_length`` sees cut."""
    import numpy as np

    n = np.array(
        [len(tokenizer(r.text, texts[p])["input_ids"]) for r in dev for p, _ in r.candidates]
    )
    return {
        "pairs": int(n.size),
        "mean_tokens": float(n.mean()),
        "truncated": float((n > max_length).mean()),
    }


def mean(per: dict, metric: str) -> float:
    return sum(m[metric] for m in per.values()) / max(len(per), 1)


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n", 1)[0])
    ap.add_argument("--models", nargs="+", required=True, help="trained model names or folders")
    ap.add_argument(
        "--out", type=Path, default=ROOT / "benchmarks/results/ce_base_ablation/ablation.json"
    )
    args = ap.parse_args()

    from sciera.artifacts.card import read_card
    from sciera.rerank.cross_encoder import resolve_model
    from sciera.settings import load_settings
    from sciera.train.ce_fit import (
        dev_rankings,
        first_stage_scores,
        load_cross_encoder,
        per_query_metrics,
    )
    from sciera.train.lineage import spec_from_card
    from sciera.train.prepare import prepare

    settings = load_settings()
    rows, dev_ids, dev = [], None, None
    for name in args.models:
        folder = Path(resolve_model(name, settings.home))
        card = read_card(folder)
        if dev is None:
            spec = spec_from_card(card)
            work = folder.with_name(folder.name + ".work")
            data = prepare(spec, settings, work)
            dev, texts, dev_ids = data.dev, data.texts, list(card["data"]["dev_qids"])
            if [r.qid for r in dev] != dev_ids:
                sys.exit(f"{name}: the dev split rebuilt from its card differs from the card's")
            first = per_query_metrics(dev, first_stage_scores(dev))
        elif missing := held_out_missing(dev_ids, card):
            sys.exit(
                f"{name}: {len(missing)} of {args.models[0]}'s dev claims are not in its dev "
                f"split (e.g. {missing[0]}), so it may have trained on them; nothing to pair"
            )
        ce = load_cross_encoder(str(folder), max_length=int(card["max_length"]))
        started = time.perf_counter()
        logits = dev_rankings(ce, dev, texts)
        seconds = (time.perf_counter() - started) / len(dev)
        per = per_query_metrics(dev, logits)
        rows.append(
            {
                "model": name,
                "base": card["base"],
                "command": card["command"],
                "parameters": sum(p.numel() for p in ce.model.parameters()),
                "train_seconds": card["train_seconds"],
                "steps": sum(e["steps"] for e in card["epochs"]),
                "card_dev_modes": card["dev"]["modes"],
                "logit": {"ndcg@10": mean(per, "ndcg@10"), "hit@1": mean(per, "hit@1")},
                "vs_first_stage": paired(first, per),
                "seconds_per_claim": seconds,
                "pair_tokens": pair_lengths(ce.tokenizer, dev, texts, int(card["max_length"])),
                "candidates_per_claim": sum(len(r.candidates) for r in dev) / len(dev),
                "per_query": per,
            }
        )
        print(
            f"{name}: logit nDCG@10 {rows[-1]['logit']['ndcg@10']:.3f} hit@1 "
            f"{rows[-1]['logit']['hit@1']:.3f}; {seconds:.2f} s/claim",
            flush=True,
        )
    for row in rows[1:]:
        row["vs_first_model"] = paired(rows[0]["per_query"], row["per_query"])
    out = {
        "command": shlex.join(["python", *sys.argv]),
        "dev_queries": len(dev),
        "first_stage": {"ndcg@10": mean(first, "ndcg@10"), "hit@1": mean(first, "hit@1")},
        "models": rows,
    }
    args.out.parent.mkdir(parents=True, exist_ok=True)
    args.out.write_text(json.dumps(out, indent=1) + "\n")
    print(json.dumps({k: v for k, v in out.items() if k != "models"}))
    for row in rows:
        print(
            row["model"], json.dumps({k: row.get(k) for k in ("vs_first_stage", "vs_first_model")})
        )


if __name__ == "__main__":
    main()
