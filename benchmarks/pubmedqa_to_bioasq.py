"""Write a BioASQ-format yes/no file from PubMedQA PQA-L, for development without BioASQ data.

Run from the repository root::

    python benchmarks/pubmedqa_to_bioasq.py --out /tmp/bioasq_yesno_from_pqal_dev.json \
        [--pubmedqa ../shared/data/pubmedqa/pqal_dev.json] [--limit N] \
        [--held-out-of scifact-verifier] [--conclusion-only]

Every yes/no PQA-L item (``maybe`` ones are left out: BioASQ has no such answer) becomes a
BioASQ Task B question: ``id`` = ``pqal-<pmid>``, ``body`` = QUESTION, ``type`` = ``yesno``,
``exact_answer`` = final_decision, ``ideal_answer`` = [LONG_ANSWER], ``documents`` = the
PubMed URL, and ``snippets``: LONG_ANSWER first, then each context, with their offsets in
the abstract text they come from (the contexts, then the conclusion, joined by one space;
``beginSection`` ``"abstract"``). ``--held-out-of MODEL`` keeps the questions a verifier
never trained on (``benchmarks/experiments/bioasq_proxy_verdict.yaml`` reads that file);
``--conclusion-only`` keeps the LONG_ANSWER snippet alone. The questions are PubMedQA's,
not BioASQ's: numbers measured on such a file are PubMedQA numbers in BioASQ's shape. The
file loads with ``load_dataset("bioasq", path)``. The data stays outside the repository
(``--out``).
"""

from __future__ import annotations

import argparse
import json
from collections.abc import Mapping, Sequence
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parents[1]
PUBMED_URL = "http://www.ncbi.nlm.nih.gov/pubmed/"


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


def to_question(pmid: str, item: Mapping[str, Any]) -> dict[str, Any] | None:
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


def convert(
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
        if (only is None or str(pmid) in only) and (q := to_question(str(pmid), item))
    ]
    if conclusion_only:
        questions = [{**q, "snippets": q["snippets"][:1]} for q in questions]
    return {"questions": questions[:limit] if limit is not None else questions}


def held_out_of(model: str) -> set[str]:
    """The PubMedQA ids a verifier never trained on (its card's ``pubmedqa_held_ids``)."""
    from sciera.settings import load_settings
    from sciera.verify.network import read_card, resolve_model
    from verify_common import pubmedqa_held_ids

    return pubmedqa_held_ids(read_card(resolve_model(model, load_settings().home)), model)


def main(argv: Sequence[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument(
        "--pubmedqa", type=Path, default=ROOT.parent / "shared/data/pubmedqa/pqal_dev.json"
    )
    ap.add_argument("--out", type=Path, required=True, help="The BioASQ JSON file to write.")
    ap.add_argument("--limit", type=int, default=None, help="Only the first N yes/no items.")
    ap.add_argument(
        "--held-out-of",
        metavar="MODEL",
        help="Only the questions verifier MODEL never trained on (its card's held-out fold).",
    )
    ap.add_argument(
        "--conclusion-only",
        action="store_true",
        help="The LONG_ANSWER as the one snippet (verify_pubmedqa.py's BioASQ-format proxy).",
    )
    args = ap.parse_args(argv)
    pqal = json.loads(args.pubmedqa.read_text(encoding="utf-8"))
    only = held_out_of(args.held_out_of) if args.held_out_of else None
    out = convert(pqal, args.limit, only=only, conclusion_only=args.conclusion_only)
    args.out.parent.mkdir(parents=True, exist_ok=True)
    args.out.write_text(json.dumps(out, indent=1, ensure_ascii=False) + "\n", encoding="utf-8")
    answers = [q["exact_answer"] for q in out["questions"]]
    print(
        f"{args.out}: {len(answers)} yes/no questions "
        f"({answers.count('yes')} yes, {answers.count('no')} no) from {args.pubmedqa}"
    )
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
