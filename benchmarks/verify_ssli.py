"""SSLI distractors through the verifier: a distractor is written to look relevant without
answering, so its verdict should be NOT ENOUGH INFO; the gold abstract answers the question.

Run from the repository root with the venv active (no network needed)::

    python benchmarks/verify_ssli.py --model verifier-dev

Data: the SSLI evaluation set (``benchmarks/results/ssli_scifact_100/build``, its
SSLI-setting questions with at least one distractor; their abstracts are refused by the
verifier's training). Each question is verified against its gold abstract (sentences from
``corpus_sentences.jsonl``) and its distractors (split into sentences) with the model
card's policy, each carrying the shipped cross-encoder's calibrated P(relevant) as the
pipeline's reranker gives it (the policy's relevance gate; ``--no-relevance``: none).
Reported: the share of distractors given SUPPORT or CONTRADICT (should be 0),
the share of gold abstracts given one, and per question whether a distractor is decided
while the gold abstract is not. The questions are wh-questions, not claims: a gold abstract
answering one has no true SUPPORT label, so its rate is a reference, not a target.
Writes ``benchmarks/results/verify_ssli/<name>.json`` and per-question rows gzipped.
"""

from __future__ import annotations

import argparse
import gzip
import json
import shlex
import sys
import time
from collections import Counter
from collections.abc import Mapping, Sequence
from dataclasses import replace
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
DATA = ROOT.parent / "shared" / "data"
SSLI = ROOT / "benchmarks" / "results" / "ssli_scifact_100" / "build" / "instances.packed.jsonl.gz"


def log(msg: str) -> None:
    print(f"{time.strftime('%H:%M:%S')} {msg}", file=sys.stderr, flush=True)


def write_rows(path: Path, rows: Sequence[Mapping]) -> None:
    path.parent.mkdir(parents=True, exist_ok=True)
    with gzip.open(path, "wt", encoding="utf-8") as out:
        for row in rows:
            out.write(json.dumps(row, ensure_ascii=False) + "\n")


def main() -> None:
    ap = argparse.ArgumentParser(
        description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter
    )
    ap.add_argument("--model", default="scifact-verifier")
    ap.add_argument("--name")
    ap.add_argument(
        "--no-relevance",
        action="store_true",
        help="no reranker P(relevant) with the candidates: the policy's gate stays off",
    )
    args = ap.parse_args()

    from sciera.corpus.sentences import split_sentences
    from sciera.settings import load_settings
    from sciera.train.verifier_data import load_abstracts
    from sciera.types import NOT_ENOUGH_INFO
    from sciera.verify import VerifyPolicy, verify_abstracts
    from sciera.verify.base import AbstractText
    from sciera.verify.network import read_card, resolve_model
    from sciera.verify.trained import TrainedSelector, TrainedVerdict

    settings = load_settings()
    path = resolve_model(args.model, settings.home)
    policy = VerifyPolicy.from_card(read_card(path))
    selector, verdict = TrainedSelector(model=str(path)), TrainedVerdict(model=str(path))
    ce = None
    if not args.no_relevance:
        from sciera.rerank.cross_encoder import CrossEncoderReranker

        ce = CrossEncoderReranker("scifact-minilm", score="calibrated")

    def relevance(question: str, a: AbstractText) -> float | None:
        """The shipped cross-encoder's P(relevant) of the candidate alone, as the
        pipeline's reranker gives it to the verify stage."""
        if ce is None:
            return None
        from sciera.types import Passage

        return ce.score(question, Passage(a.doc_id, a.doc_id, 0, a.title, " ".join(a.sentences)))

    abstracts = load_abstracts(DATA / "scifact" / "corpus_sentences.jsonl")
    rows = []
    with gzip.open(SSLI, "rt", encoding="utf-8") as fh:
        instances = [json.loads(line) for line in fh if line.strip()]
    for inst in instances:
        if inst["setting"] != "ssli":
            continue
        distractors = [c for c in inst["candidates"] if c["is_distractor"] and c.get("text")]
        if not distractors:
            continue
        gold = [abstracts[p.split("#")[0]] for p in inst["gold_passage_ids"]]
        fakes = [
            AbstractText(c["passage_id"], "", tuple(split_sentences(c["text"])))
            for c in distractors
        ]
        q = inst["question"]
        texts = [replace(a, relevance=relevance(q, a)) for a in [*gold, *fakes]]
        result = verify_abstracts(q, texts, selector, verdict, policy)
        labels = {v.doc_id: v.label for v in result.verdicts}
        rows.append(
            {
                "id": inst["id"],
                "question": inst["question"],
                "gold": {a.doc_id: labels.get(a.doc_id) for a in gold},
                "distractors": {
                    c["passage_id"]: {
                        "type": c["distractor_type"],
                        "label": labels.get(c["passage_id"]),
                    }
                    for c in distractors
                },
                "overall": result.label,
            }
        )
    decided = [
        (d["type"], d["label"] != NOT_ENOUGH_INFO) for r in rows for d in r["distractors"].values()
    ]
    gold_decided = [lab != NOT_ENOUGH_INFO for r in rows for lab in r["gold"].values()]
    by_type = Counter(t for t, _ in decided)
    worse = [
        any(d["label"] != NOT_ENOUGH_INFO for d in r["distractors"].values())
        and all(lab == NOT_ENOUGH_INFO for lab in r["gold"].values())
        for r in rows
    ]
    out = {
        "command": shlex.join(["python", *sys.argv]),
        "model": args.model,
        "policy": read_card(path)["policy"],
        "relevance": None if ce is None else "scifact-minilm, calibrated, each candidate alone",
        "questions": len(rows),
        "distractors": len(decided),
        "distractor_decided_rate": sum(x for _, x in decided) / max(1, len(decided)),
        "distractor_decided_by_type": {
            t: sum(x for tt, x in decided if tt == t) / n for t, n in sorted(by_type.items())
        },
        "gold_decided_rate": sum(gold_decided) / max(1, len(gold_decided)),
        "questions_distractor_decided_gold_not": sum(worse) / max(1, len(rows)),
        "overall_labels": dict(Counter(r["overall"] for r in rows)),
    }
    name = args.name or Path(str(args.model)).name
    dest = ROOT / "benchmarks" / "results" / "verify_ssli"
    dest.mkdir(parents=True, exist_ok=True)
    (dest / f"{name}.json").write_text(json.dumps(out, indent=1) + "\n")
    write_rows(dest / f"{name}_rows.jsonl.gz", rows)
    log(json.dumps({k: v for k, v in out.items() if k != "command"}))


if __name__ == "__main__":
    main()
