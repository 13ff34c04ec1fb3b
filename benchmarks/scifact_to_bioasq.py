"""Write a BioASQ-format yes/no file from a verifier's SciFact dev claims: short, direct gold
snippets, as BioASQ's are (``pubmedqa_to_bioasq.py``'s proxy reads PubMedQA conclusions).

Run from the repository root with the venv active (no network; the 1.5B writes the
questions, its replies cached)::

    python benchmarks/scifact_to_bioasq.py --out /tmp/sciera-bioasq-scifact/dev.json \
        [--model scifact-verifier] [--claims ../shared/data/scifact/claims_train.jsonl]

Each dev claim of MODEL (its card's ``dev_ids``: training claims it never trained on; never
a BEIR test claim) whose evidence abstracts all carry the same label becomes one BioASQ
Task B question: ``body`` = the claim rewritten by the embedded 1.5B as one yes/no question
(answered "yes" exactly when the claim is true), ``exact_answer`` = yes for SUPPORT, no for
CONTRADICT, ``snippets`` = every gold rationale sentence of its evidence abstracts (from
``corpus_sentences.jsonl``, with offsets in the abstract's sentences joined by one space),
``documents`` = those abstracts (their SciFact ids in BioASQ's URL form). Left out, and
counted: claims without evidence (NOT ENOUGH INFO: BioASQ has no such answer), claims whose
abstracts disagree, claims with a negation cue ("no", "not", "n't", "never", ...: a rewrite
can flip what they assert, and then the label with it) and replies that are not one
question. The questions are SciFact's claims
in a question's form, not BioASQ's: numbers on this file are SciFact dev numbers in
BioASQ's shape. ``benchmarks/experiments/bioasq_scifact_dev.yaml`` reads it. The data stays
outside the repository (``--out``).
"""

from __future__ import annotations

import argparse
import json
import re
import sys
from collections import Counter
from collections.abc import Mapping, Sequence
from pathlib import Path
from typing import Any

from pubmedqa_to_bioasq import PUBMED_URL, joined_starts, snippet
from verify_common import DATA, log

REWRITE = (
    "Rewrite the statement as one yes/no question that is answered 'yes' exactly when the "
    "statement is true. Keep every term of the statement; do not add or drop a negation. "
    "Reply with the question only."
)
"""The system message of the rewrite (the statement is the user message)."""
NEGATION = re.compile(r"\b(no|not|never|neither|nor|none|cannot|without)\b|n't\b", re.I)
ANSWERS = {"SUPPORT": "yes", "CONTRADICT": "no"}


def rewrite(llm: Any, claim: str) -> str | None:
    """The LLM's question for ``claim``: its first line, when that is one question."""
    from sciera.llm.base import Message

    reply = llm.complete([Message("system", REWRITE), Message("user", claim)], max_tokens=60)
    lines = reply.text.strip().splitlines()
    first = lines[0].strip() if lines else ""
    return first if first.endswith("?") and first.count("?") == 1 else None


def to_question(claim: Any, question: str, abstracts: Mapping[str, Any]) -> dict[str, Any] | None:
    """One claim as a BioASQ yes/no question (None when its abstracts disagree)."""
    labels = {g.label for g in claim.evidence.values()}
    if len(labels) != 1:
        return None
    snippets = []
    for doc, gold in sorted(claim.evidence.items()):
        sentences = abstracts[doc].sentences
        starts = joined_starts(sentences)
        for i in sorted(set().union(*gold.rationales)):
            snippets.append(snippet(doc, sentences[i], starts[i]))
    return {
        "id": f"scifact-{claim.id}",
        "body": question,
        "type": "yesno",
        "exact_answer": ANSWERS[labels.pop()],
        "ideal_answer": [claim.claim],
        "documents": [PUBMED_URL + doc for doc in sorted(claim.evidence)],
        "snippets": snippets,
    }


def main(argv: Sequence[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--out", type=Path, required=True, help="The BioASQ JSON file to write.")
    ap.add_argument("--model", default="scifact-verifier", help="Whose dev claims.")
    ap.add_argument("--claims", type=Path, default=DATA / "scifact" / "claims_train.jsonl")
    args = ap.parse_args(argv)
    from sciera.datasets.claims import read_gold
    from sciera.llm.registry import make_llm
    from sciera.settings import load_settings
    from sciera.train.verifier_data import load_abstracts
    from sciera.verify.network import read_card, resolve_model

    settings = load_settings()
    card = read_card(resolve_model(args.model, settings.home))
    dev = {str(c) for c in card["data"]["dev_ids"]}
    claims = [c for c in read_gold(args.claims) if c.id in dev]
    if len(claims) != len(dev):
        sys.exit(f"{args.claims}: {len(dev) - len(claims)} of {args.model}'s dev claims missing")
    abstracts = load_abstracts(DATA / "scifact" / "corpus_sentences.jsonl")
    llm = make_llm(settings)
    left_out: Counter[str] = Counter()
    questions = []
    for claim in claims:
        if not claim.evidence:
            left_out["no_evidence"] += 1
        elif NEGATION.search(claim.claim):
            left_out["negation_cue"] += 1
        elif (question := rewrite(llm, claim.claim)) is None:
            left_out["reply_not_one_question"] += 1
        elif (item := to_question(claim, question, abstracts)) is None:
            left_out["abstracts_disagree"] += 1
        else:
            questions.append(item)
    args.out.parent.mkdir(parents=True, exist_ok=True)
    out = {"questions": questions}
    args.out.write_text(json.dumps(out, indent=1, ensure_ascii=False) + "\n", encoding="utf-8")
    answers = Counter(q["exact_answer"] for q in questions)
    log(
        f"{args.out}: {len(questions)} yes/no questions ({answers['yes']} yes, {answers['no']} "
        f"no) from {len(claims)} dev claims of {args.model}; questions by {llm.model_id}; "
        f"left out {dict(left_out)}"
    )
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
