"""Seconds per claim of ``sciera verify`` over the top 10 abstracts, with the trained verdict
(no LLM) and with the combined verdict (the LLM's label probabilities for each abstract
past the relevance gate), the LLM response cache off so every LLM call is paid.

Run from the repository root with the venv active (no network needed)::

    python benchmarks/perf/verify_speed.py --corpus corpora/scifact

Claims: SciFact training claims outside the verifier's dev split (seeded draw; speed only,
no score), the first one warming the pipeline up. Timed through the pipeline
(``sciera.pipeline.verify_spec``: retrieve, DeepEra with the cross-encoder, verify), per
claim end to end and for the verify stage alone. Writes
``benchmarks/results/verify_speed/<name>.json``.
"""

from __future__ import annotations

import argparse
import json
import random
import time
from pathlib import Path

from common import DATA, RESULTS, ROOT, command, log, write_json


def main() -> None:
    ap = argparse.ArgumentParser(
        description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter
    )
    ap.add_argument("--corpus", type=Path, default=ROOT / "corpora" / "scifact")
    ap.add_argument("--model", default="scifact-verifier")
    ap.add_argument("--claims", type=int, default=8)
    ap.add_argument("--name", default="verify_speed")
    args = ap.parse_args()

    from sciera.datasets.claims import read_gold
    from sciera.pipeline import build_pipeline, verify_spec
    from sciera.settings import load_settings
    from sciera.verify.network import read_card, resolve_model

    settings = load_settings()
    card = read_card(resolve_model(args.model, settings.home))
    dev = set(card["data"]["dev_ids"])
    claims = [g for g in read_gold(DATA / "scifact" / "claims_train.jsonl") if g.id not in dev]
    random.Random(5).shuffle(claims)
    claims = claims[: args.claims]
    out: dict = {"command": command(), "abstracts": 10, "verdicts": {}}
    for verdict in ("trained", "combined"):
        s = load_settings(
            llm={"cache": False},
            verify={"verdict": verdict, "abstracts": 10, "model": args.model},
        )
        pipe = build_pipeline(verify_spec(s), s, corpus=args.corpus)
        pipe.run(claims[0].claim, "yesno")  # loads the models
        rows = []
        for g in claims[1:]:
            t = time.perf_counter()
            r = pipe.run(g.claim, "yesno")
            assert r.verification is not None
            rows.append(
                {
                    "seconds": time.perf_counter() - t,
                    "verify_seconds": r.cost["verify"]["seconds"],
                    "decided": sum(v.label != "NOT ENOUGH INFO" for v in r.verification.verdicts),
                }
            )
        n = len(rows)
        out["verdicts"][verdict] = {
            "claims": n,
            "seconds_per_claim": sum(r["seconds"] for r in rows) / n,
            "verify_seconds_per_claim": sum(r["verify_seconds"] for r in rows) / n,
            "abstracts_decided_per_claim": sum(r["decided"] for r in rows) / n,
        }
        log(f"{verdict}: {json.dumps(out['verdicts'][verdict])}")
    log(f"wrote {write_json(RESULTS / 'verify_speed' / f'{args.name}.json', out)}")


if __name__ == "__main__":
    main()
