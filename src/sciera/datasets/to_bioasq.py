"""BioASQ-format yes/no files from PubMedQA and SciFact, for development without BioASQ data
(``sciera dataset bioasq-from-pubmedqa`` and ``bioasq-from-scifact``). The files load with
``load_dataset("bioasq", path)``.

**From PubMedQA PQA-L** (:func:`convert_pubmedqa`). Every yes/no PQA-L item (``maybe`` ones
are left out: BioASQ has no such answer) becomes a BioASQ Task B question: ``id`` =
``pqal-<pmid>``, ``body`` = QUESTION, ``type`` = ``yesno``, ``exact_answer`` =
final_decision, ``ideal_answer`` = [LONG_ANSWER], ``documents`` = the PubMed URL, and
``snippets``: LONG_ANSWER first, then each context, with their offsets in the abstract text
they come from (the contexts, then the conclusion, joined by one space; ``beginSection``
``"abstract"``). Held out of a verifier: the questions it never trained on
(``benchmarks/experiments/bioasq_proxy_verdict.yaml`` reads that file); conclusion only:
the LONG_ANSWER snippet alone. The questions are PubMedQA's, not BioASQ's: numbers measured
on such a file are PubMedQA numbers in BioASQ's shape.

**From a verifier's SciFact dev claims** (:func:`convert_scifact`): short, direct gold
snippets, as BioASQ's are (the PubMedQA proxy reads conclusions). Each dev claim (the card's
``dev_ids``: training claims the verifier never trained on; never a BEIR test claim) whose
evidence abstracts all carry the same label becomes one question: ``body`` = the claim
rewritten by the LLM as one yes/no question (answered "yes" exactly when the claim is
true), ``exact_answer`` = yes for SUPPORT, no for CONTRADICT, ``snippets`` = every gold
rationale sentence of its evidence abstracts (with offsets in the abstract's sentences
joined by one space), ``documents`` = those abstracts (their SciFact ids in BioASQ's URL
form). Left out, and counted: claims without evidence (NOT ENOUGH INFO: BioASQ has no such
answer), claims whose abstracts disagree, claims with a negation cue ("no", "not", "n't",
"never", ...: a rewrite can flip what they assert, and then the label with it) and replies
that are not one question. Numbers on this file are SciFact dev numbers in BioASQ's shape
(``benchmarks/experiments/bioasq_scifact_dev.yaml`` reads it).
"""

from __future__ import annotations

import json
import re
from collections import Counter
from collections.abc import Iterable, Mapping, Sequence
from pathlib import Path
from typing import Any

from sciera.errors import ScieraError

PUBMED_URL = "http://www.ncbi.nlm.nih.gov/pubmed/"
REWRITE = (
    "Rewrite the statement as one yes/no question that is answered 'yes' exactly when the "
    "statement is true. Keep every term of the statement; do not add or drop a negation. "
    "Reply with the question only."
)
"""The system message of the SciFact rewrite (the statement is the user message)."""
NEGATION = re.compile(r"\b(no|not|never|neither|nor|none|cannot|without)\b|n't\b", re.I)
ANSWERS = {"SUPPORT": "yes", "CONTRADICT": "no"}


def joined_starts(texts: Sequence[str]) -> list[int]:
    """Where each of ``texts`` starts in them joined by one space (an abstract's text)."""
    starts, at = [], 0
    for text in texts:
        starts.append(at)
        at += len(text) + 1
    return starts


def snippet(pmid: str, text: str, start: int) -> dict[str, Any]:
    """A BioASQ snippet: ``text`` at ``start`` in the abstract of document ``pmid``."""
    return {
        "offsetInBeginSection": start,
        "offsetInEndSection": start + len(text),
        "text": text,
        "beginSection": "abstract",
        "endSection": "abstract",
        "document": PUBMED_URL + pmid,
    }


def pubmedqa_question(pmid: str, item: Mapping[str, Any]) -> dict[str, Any] | None:
    """One PQA-L item as a BioASQ yes/no question (None for a ``maybe`` item)."""
    decision = str(item["final_decision"]).strip().lower()
    if decision not in ("yes", "no"):
        return None
    contexts = [str(c) for c in item["CONTEXTS"]]
    long_answer = str(item["LONG_ANSWER"]).strip()
    starts = joined_starts([*contexts, long_answer])  # the abstract: contexts, conclusion
    snippets = [snippet(pmid, long_answer, starts[-1])]
    snippets += [snippet(pmid, c, s) for c, s in zip(contexts, starts, strict=False)]
    return {
        "id": f"pqal-{pmid}",
        "body": str(item["QUESTION"]).strip(),
        "type": "yesno",
        "exact_answer": decision,
        "ideal_answer": [long_answer],
        "documents": [PUBMED_URL + pmid],
        "snippets": snippets,
    }


def convert_pubmedqa(
    pqal: Mapping[str, Mapping[str, Any]],
    limit: int | None = None,
    *,
    only: set[str] | None = None,
    conclusion_only: bool = False,
) -> dict[str, Any]:
    """``{"questions": [...]}`` of the yes/no items, in file order (the first ``limit``;
    with ``only``, those PubMed ids alone; with ``conclusion_only``, the LONG_ANSWER as the
    one snippet)."""
    questions = [
        q
        for pmid, item in pqal.items()
        if (only is None or str(pmid) in only) and (q := pubmedqa_question(str(pmid), item))
    ]
    if conclusion_only:
        questions = [{**q, "snippets": q["snippets"][:1]} for q in questions]
    return {"questions": questions[:limit] if limit is not None else questions}


def verifier_card(model: str, home: str | Path) -> dict[str, Any]:
    """The card of verifier ``model`` (a shipped name, a trained name or a folder)."""
    from sciera.verify.network import read_card, resolve_model

    return read_card(resolve_model(model, home))


def pubmedqa_held_ids(card: Mapping[str, Any], model: str) -> set[str]:
    """The PubMedQA ids verifier ``model`` never trained on (its card's
    ``pubmedqa_held_ids``); an error when the card has none."""
    held = {str(i) for i in card.get("data", {}).get("pubmedqa_held_ids") or []}
    if not held:
        raise ScieraError(f"{model}: no held-out PubMedQA questions in its card")
    return held


def rewrite(llm: Any, claim: str) -> str | None:
    """The LLM's question for ``claim``: its first line, when that is one question."""
    from sciera.llm.base import Message

    reply = llm.complete([Message("system", REWRITE), Message("user", claim)], max_tokens=60)
    lines = reply.text.strip().splitlines()
    first = lines[0].strip() if lines else ""
    return first if first.endswith("?") and first.count("?") == 1 else None


def scifact_question(
    claim: Any, question: str, abstracts: Mapping[str, Any]
) -> dict[str, Any] | None:
    """One claim as a BioASQ yes/no question (None when its abstracts disagree);
    ``abstracts`` maps a doc id to a record with its ``sentences``."""
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


def dev_claims(card: Mapping[str, Any], model: str, claims_path: Path) -> list[Any]:
    """The claims of ``claims_path`` (SciFact's claims JSONL) that are verifier ``model``'s
    dev claims (its card's ``dev_ids``), in file order; an error when any is missing."""
    from sciera.datasets.claims import read_gold

    dev = {str(c) for c in card["data"]["dev_ids"]}
    claims = [c for c in read_gold(claims_path) if c.id in dev]
    if len(claims) != len(dev):
        raise ScieraError(
            f"{claims_path}: {len(dev) - len(claims)} of {model}'s dev claims missing"
        )
    return claims


def convert_scifact(
    claims: Iterable[Any], abstracts: Mapping[str, Any], llm: Any
) -> tuple[dict[str, Any], Counter[str]]:
    """``({"questions": [...]}, left out by reason)`` of ``claims`` in order, each question
    rewritten by ``llm``."""
    left_out: Counter[str] = Counter()
    questions = []
    for claim in claims:
        if not claim.evidence:
            left_out["no_evidence"] += 1
        elif NEGATION.search(claim.claim):
            left_out["negation_cue"] += 1
        elif (question := rewrite(llm, claim.claim)) is None:
            left_out["reply_not_one_question"] += 1
        elif (item := scifact_question(claim, question, abstracts)) is None:
            left_out["abstracts_disagree"] += 1
        else:
            questions.append(item)
    return {"questions": questions}, left_out


def write_bioasq(path: Path, data: Mapping[str, Any]) -> Path:
    """Write a BioASQ JSON file (one-space indent, UTF-8 as it is), its folder made."""
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(json.dumps(data, indent=1, ensure_ascii=False) + "\n", encoding="utf-8")
    return path
