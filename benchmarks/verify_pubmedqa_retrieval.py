"""PubMedQA's yes/no/maybe questions in the retrieval setting, decided by the verifier: each
question is asked over a corpus of all 500 PQA-L abstracts, as ``sciera ask
--decision-only`` answers it, on the questions the verifier never trained on.

Run from the repository root with the venv active (no network needed)::

    sciera ingest ../shared/data/pubmedqa/pqal_dev.json --corpus corpora/pubmedqa-dev
    sciera index --corpus corpora/pubmedqa-dev
    python benchmarks/verify_pubmedqa_retrieval.py --corpus corpora/pubmedqa-dev

Questions: the model card's held-out PubMedQA fold (``pubmedqa_held_ids``). Each runs
through the pipeline's verify spec (``sciera.pipeline.verify_spec``: hybrid first stage,
DeepEra with the shipped cross-encoder, then the verify stage over the top 5 abstracts with
the settings' verdict model, ``combined`` by default); the decision is the overall verdict's
(SUPPORT = yes, CONTRADICT = no, NOT ENOUGH INFO or CONFLICTING = maybe:
``sciera.generate.verified.decide``). Evidence recall: the question's own abstract among the
abstracts verified. Against always the majority label of the training questions, and
against ``ask`` before the verifier decided (``results/pubmedqa_answer_ce_v4.jsonl.gz``:
retrieval setting, DeepEra evidence at tau 0.8, the LLM's choice probabilities; a refusal
counts as wrong) on the questions both answered; exact McNemar on per-question correctness.

Resumable: every answer is appended to ``--work``/rows.jsonl; a rerun skips the questions
there (for the same model and settings); ``--limit-minutes`` starts no new question after
the budget. Writes ``benchmarks/results/verify_pubmedqa/<name>.json`` and the rows gzipped.
"""

from __future__ import annotations

import argparse
import gzip
import json
import shlex
import sys
import time
from collections import Counter
from pathlib import Path

import numpy as np

from sciera.eval.significance import mcnemar_exact
from verify_common import DATA, ROOT, log, pubmedqa_held_ids, write_rows

NAMES = ("yes", "no", "maybe")
ASK_ROWS = ROOT / "benchmarks" / "results" / "pubmedqa_answer_ce_v4.jsonl.gz"


def scores(pred: list[str], gold: list[str]) -> dict[str, object]:
    """Accuracy, macro-F1 over yes/no/maybe (``sciera.eval.metrics.bioasq.macro_f1``: a
    prediction outside them, such as a refusal, is wrong) and the predictions' counts."""
    from sciera.eval.metrics.bioasq import PUBMEDQA_LABELS, macro_f1

    return {
        "n": len(gold),
        "accuracy": round(float(np.mean([p == g for p, g in zip(pred, gold, strict=True)])), 4),
        "macro_f1": round(macro_f1(gold, pred, PUBMEDQA_LABELS), 4),
        "predicted": dict(Counter(pred)),
    }


def main() -> None:
    ap = argparse.ArgumentParser(
        description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter
    )
    ap.add_argument("--corpus", type=Path, default=ROOT / "corpora" / "pubmedqa-dev")
    ap.add_argument("--model", default="scifact-verifier")
    ap.add_argument("--limit-minutes", type=float)
    ap.add_argument("--work", type=Path, default=Path("/tmp/sciera-bench/verify_pubmedqa_ret"))
    ap.add_argument("--name", default="scifact-verifier_retrieval")
    args = ap.parse_args()
    if not args.corpus.is_dir():
        raise SystemExit(
            f"{args.corpus}: no corpus; ingest and index it first (see this script's docstring)"
        )

    from sciera.generate.verified import decide
    from sciera.pipeline import build_pipeline, verify_spec
    from sciera.settings import load_settings
    from sciera.train.verifier_data import load_pubmedqa_items
    from sciera.verify.network import read_card, resolve_model

    settings = load_settings(verify={"model": args.model})
    card = read_card(resolve_model(args.model, settings.home))
    held = pubmedqa_held_ids(card, args.model)
    items = load_pubmedqa_items(DATA / "pubmedqa" / "pqal_dev.json")
    majority = Counter(NAMES[q.label] for q in items if q.id not in held).most_common(1)[0][0]
    items = [q for q in items if q.id in held]
    key = f"{args.model}|{settings.verify.verdict}|{settings.llm.model}"
    args.work.mkdir(parents=True, exist_ok=True)
    path = args.work / "rows.jsonl"
    done: dict[str, dict] = {}
    if path.exists():
        for line in path.read_text(encoding="utf-8").splitlines():
            row = json.loads(line)
            if row["key"] == key:
                done[row["id"]] = row
    pipe = build_pipeline(verify_spec(settings), settings, corpus=args.corpus)
    started = time.monotonic()
    with path.open("a", encoding="utf-8") as fh:
        for n, q in enumerate(items, 1):
            if q.id in done:
                continue
            if args.limit_minutes and time.monotonic() - started > 60 * args.limit_minutes:
                log("time budget reached: rerun the same command to go on")
                break
            t = time.perf_counter()
            r = pipe.run(q.question, "yesno")
            v = r.verification
            row = {
                "key": key,
                "id": q.id,
                "gold": NAMES[q.label],
                "pred": decide(v) if v is not None else "maybe",
                "verdict": v.label if v is not None else None,
                "read": [a.doc_id for a in v.verdicts] if v is not None else [],
                "own_read": v is not None and any(a.doc_id == q.id for a in v.verdicts),
                "seconds": round(time.perf_counter() - t, 2),
            }
            fh.write(json.dumps(row) + "\n")
            fh.flush()
            done[q.id] = row
            log(f"{n}/{len(items)} {q.id}: {row['pred']} (gold {row['gold']})")
    rows = [done[q.id] for q in items if q.id in done]
    gold = [r["gold"] for r in rows]
    pred = [r["pred"] for r in rows]
    always = [majority] * len(rows)
    out: dict = {
        "command": shlex.join(["python", *sys.argv]),
        "model": args.model,
        "verdict": settings.verify.verdict,
        "questions": len(rows),
        "of": len(items),
        "majority_label": majority,
        "verifier": scores(pred, gold),
        "always_majority": scores(always, gold),
        "evidence_recall": round(float(np.mean([r["own_read"] for r in rows])), 4) if rows else 0,
        "seconds_per_question": round(float(np.mean([r["seconds"] for r in rows])), 2)
        if rows
        else 0,
        "paired": {
            "verifier_vs_always_majority": mcnemar_exact(
                [p == g for p, g in zip(always, gold, strict=True)],
                [p == g for p, g in zip(pred, gold, strict=True)],
            ).as_dict()
        },
    }
    if ASK_ROWS.exists():
        with gzip.open(ASK_ROWS, "rt", encoding="utf-8") as fh:
            ask = {
                a["pmid"]: a
                for a in map(json.loads, fh)
                if a["setting"] == "retrieval" and a["extractor"] == "deepera_ce"
            }
        both = [r for r in rows if r["id"] in ask]
        if both:
            a_right = [ask[r["id"]]["pred"] == r["gold"] for r in both]
            v_right = [r["pred"] == r["gold"] for r in both]
            out["ask_before_the_verifier"] = {
                "rows": str(ASK_ROWS.relative_to(ROOT)),
                "questions_both_answered": len(both),
                "ask": scores([ask[r["id"]]["pred"] for r in both], [r["gold"] for r in both]),
                "verifier": scores([r["pred"] for r in both], [r["gold"] for r in both]),
                "paired": mcnemar_exact(a_right, v_right).as_dict(),
            }
    dest = ROOT / "benchmarks" / "results" / "verify_pubmedqa"
    dest.mkdir(parents=True, exist_ok=True)
    (dest / f"{args.name}.json").write_text(json.dumps(out, indent=1) + "\n")
    write_rows(dest / f"{args.name}_rows.jsonl.gz", rows)
    log(json.dumps({k: out[k] for k in ("verifier", "always_majority", "evidence_recall")}))
    log(f"wrote {dest / (args.name + '.json')}")


if __name__ == "__main__":
    main()
