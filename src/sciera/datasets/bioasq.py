"""BioASQ Task B JSON (``{"questions": [...]}``): the yes/no questions, with their snippets.

A question is ``{"id", "body", "type", "exact_answer", "ideal_answer": [...], "documents":
[url, ...], "snippets": [{"text", "document", "offsetInBeginSection", "offsetInEndSection",
"beginSection", "endSection"}, ...]}``; documents are PubMed URLs
(``http://www.ncbi.nlm.nih.gov/pubmed/<pmid>``). Only ``"type": "yesno"`` questions are
loaded (factoid, list and summary questions have no yes/no label).

- ``labels`` and the first reference answer: ``exact_answer`` (``yes`` / ``no``; a
  one-item list is read as its item), for ``yesno_accuracy`` and ``macro_f1``; the ideal
  answers follow as references for ROUGE/F1;
- ``candidates``: the snippets (the reasoning setting, gold snippets given), one passage
  each, ``<pmid>#<beginSection>:<start>-<end>`` (``<pmid>#s<n>`` without offsets), the same
  span (document, section, offsets) listed twice kept once, its first text (BioASQ's own
  files list some spans twice, once as tokenized or with its section heading on a line of
  its own); all judged relevant (``unit="passage"``);
- ``sentences``: each snippet split into sentences, per document in snippet order;
- ``question_types``: ``yesno`` for every question (what the runner asks the pipeline for);
- ``yesno_answers``: ``("yes", "no")``: BioASQ has no "maybe", so the runner asks for yes
  or no only.

``split``: ``train`` (batches 7B and 8B) or ``dev`` (9B) for a file whose questions carry
``batch`` (``../shared/data/bioasq/training_7b_9b.json``); ``None`` loads every question.
Later batches are not assigned to either: they are kept for independent checks.

A bad question is an :class:`~sciera.errors.InputError` naming file, question and field.
"""

from __future__ import annotations

import json
import re
from pathlib import Path
from typing import Any

from sciera.datasets.loaders import EvalDataset, pool_sentences
from sciera.errors import InputError
from sciera.types import Passage

YESNO = ("yes", "no")
BATCH_SPLITS = {"7B": "train", "8B": "train", "9B": "dev"}
"""Which split each BioASQ batch (its first two characters) belongs to."""
_PMID = re.compile(r"(\d+)/*$")


def pmid_of(document: str) -> str:
    """The PubMed id at the end of a BioASQ document URL (a bare id is returned as is)."""
    found = _PMID.search(document.strip())
    if found is None:
        raise ValueError(f"no PubMed id at the end of {document!r}")
    return found.group(1)


def _label(value: Any) -> str | None:
    if isinstance(value, list) and len(value) == 1:
        value = value[0]
    if isinstance(value, list) and len(value) == 1:  # [["yes"]]
        value = value[0]
    text = value.strip().lower() if isinstance(value, str) else ""
    return text if text in YESNO else None


def _snippet_id(pmid: str, n: int, snippet: dict[str, Any]) -> str:
    start, end = snippet.get("offsetInBeginSection"), snippet.get("offsetInEndSection")
    if isinstance(start, int) and isinstance(end, int):
        section = str(snippet.get("beginSection") or "")
        return f"{pmid}#{section}:{start}-{end}"
    return f"{pmid}#s{n}"


def _snippets(file: str, where: str, raw: Any) -> tuple[Passage, ...]:
    if not isinstance(raw, list) or not raw:
        raise InputError(file, where, "snippets", "expected a non-empty list")
    pool: dict[str, Passage] = {}
    for n, snippet in enumerate(raw):
        field = f"snippets[{n}]"
        if not isinstance(snippet, dict):
            raise InputError(file, where, field, "expected an object")
        text, document = snippet.get("text"), snippet.get("document")
        if not isinstance(text, str) or not text.strip():
            raise InputError(file, where, f"{field}.text", "missing or empty")
        if not isinstance(document, str | int) or isinstance(document, bool):
            raise InputError(file, where, f"{field}.document", "missing (a PubMed URL)")
        try:
            pmid = pmid_of(str(document))
        except ValueError as exc:
            raise InputError(file, where, f"{field}.document", str(exc)) from None
        pid = _snippet_id(pmid, n, snippet)
        pool.setdefault(pid, Passage(pid, pmid, n, "", text.strip()))
    return tuple(pool.values())


def _in_split(file: str, where: str, q: dict[str, Any], split: str | None) -> bool:
    if split is None:
        return True
    batch = q.get("batch")
    if not isinstance(batch, str) or batch[:2] not in BATCH_SPLITS:
        raise InputError(file, where, "batch", f"{batch!r} is not a 7B, 8B or 9B batch")
    return BATCH_SPLITS[batch[:2]] == split


def load_bioasq(path: Path, *, split: str | None = None) -> EvalDataset:
    """The yes/no questions of a BioASQ JSON file (``split``: see the module docstring)."""
    if split not in (None, *sorted(set(BATCH_SPLITS.values()))):
        raise InputError(str(path), None, "split", f"{split!r} is not train or dev")
    file = str(path)
    try:
        data = json.loads(Path(path).read_text(encoding="utf-8"))
    except (OSError, ValueError) as exc:
        raise InputError(file, None, "file", f"cannot read BioASQ JSON: {exc}") from exc
    questions = data.get("questions") if isinstance(data, dict) else None
    if not isinstance(questions, list):
        raise InputError(file, None, "questions", "expected an object with a questions list")
    queries, qrels, answers, cands, labels, sentences = {}, {}, {}, {}, {}, {}
    seen: set[str] = set()
    for i, q in enumerate(questions):
        if not isinstance(q, dict):
            raise InputError(file, f"question {i}", "record", "expected an object")
        qid = q.get("id")
        if not isinstance(qid, str | int) or isinstance(qid, bool) or not str(qid).strip():
            raise InputError(file, f"question {i}", "id", "missing or empty")
        qid, where = str(qid).strip(), f"question {qid}"
        if qid in seen:
            raise InputError(file, where, "id", "the question appears more than once")
        seen.add(qid)
        if q.get("type") != "yesno" or not _in_split(file, where, q, split):
            continue
        body = q.get("body")
        if not isinstance(body, str) or not body.strip():
            raise InputError(file, where, "body", "missing or empty")
        label = _label(q.get("exact_answer"))
        if label is None:
            raise InputError(
                file, where, "exact_answer", f"not yes or no: {q.get('exact_answer')!r}"
            )
        ideal = q.get("ideal_answer", [])
        ideal = [ideal] if isinstance(ideal, str) else ideal
        if not isinstance(ideal, list) or not all(isinstance(a, str) for a in ideal):
            raise InputError(file, where, "ideal_answer", "expected a list of strings")
        pool = _snippets(file, where, q.get("snippets"))
        queries[qid] = body.strip()
        labels[qid] = label
        answers[qid] = (label, *(a.strip() for a in ideal if a.strip()))
        cands[qid] = pool
        qrels[qid] = {p.passage_id: 1 for p in pool}
        sentences[qid] = pool_sentences(pool)
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
        yesno_answers=("yes", "no"),
    )
