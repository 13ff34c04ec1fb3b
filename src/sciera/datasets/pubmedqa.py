"""PubMedQA (PQA-L JSON: ``{pmid: {QUESTION, CONTEXTS, LONG_ANSWER, final_decision}}``).

Each question's candidate pool is its own abstract's context passages
(``<pmid>#<i>``), all gold; the reference answer is ``final_decision``
(yes/no/maybe), also the question's gold label (``labels``, for ``macro_f1`` and, through
the answers, ``yesno_accuracy``), and the long answer is a second reference for ROUGE/F1.
The abstract's sentences (``sentences``: each context split on its own, in order) are what
a verdict reads in the reasoning setting; SPEC maps the labels to verdicts (yes = SUPPORT,
no = CONTRADICT, maybe = NOT ENOUGH INFO). Every question is a yes/no question
(``question_types``), however it is worded.
"""

from __future__ import annotations

import json
from pathlib import Path

from sciera.datasets.loaders import EvalDataset, pool_sentences
from sciera.errors import InputError
from sciera.types import Passage

_DECISIONS = {"yes", "no", "maybe"}


def load_pubmedqa(path: Path, *, split: str | None = None) -> EvalDataset:
    """``split`` is ignored (a PQA-L file is one split)."""
    del split
    try:
        data = json.loads(Path(path).read_text(encoding="utf-8"))
    except (OSError, ValueError) as exc:
        raise InputError(str(path), None, "file", f"cannot read PubMedQA JSON: {exc}") from exc
    if not isinstance(data, dict):
        raise InputError(str(path), None, "file", "expected an object keyed by PubMed id")
    queries, qrels, answers, cands, labels, sentences = {}, {}, {}, {}, {}, {}
    for pmid, item in data.items():
        where = f"record {pmid}"
        if not isinstance(item, dict):
            raise InputError(str(path), where, "record", "expected an object")
        question, contexts = item.get("QUESTION"), item.get("CONTEXTS")
        decision = str(item.get("final_decision", "")).lower()
        if not isinstance(question, str) or not question.strip():
            raise InputError(str(path), where, "QUESTION", "missing or empty")
        if not isinstance(contexts, list) or not contexts:
            raise InputError(str(path), where, "CONTEXTS", "expected a non-empty list")
        for i, text in enumerate(contexts):
            if not isinstance(text, str) or not text.strip():
                raise InputError(str(path), where, f"CONTEXTS[{i}]", "not a non-empty string")
        if decision not in _DECISIONS:
            raise InputError(str(path), where, "final_decision", f"not yes/no/maybe: {decision!r}")
        passages = tuple(
            Passage(f"{pmid}#{i}", str(pmid), i, "", str(text)) for i, text in enumerate(contexts)
        )
        queries[pmid] = question
        cands[pmid] = passages
        qrels[pmid] = {p.passage_id: 1 for p in passages}
        long = str(item.get("LONG_ANSWER") or "").strip()
        answers[pmid] = (decision, long) if long else (decision,)
        labels[pmid] = decision
        sentences[pmid] = pool_sentences(passages)
    return EvalDataset(
        Path(path).stem,
        "passage",
        queries,
        qrels,
        answers,
        cands,
        labels=labels,
        sentences=sentences,
        question_types=dict.fromkeys(queries, "yesno"),
        yesno_answers=("yes", "no", "maybe"),
    )
