"""Questions answered in a full-text paper's body as a dataset (``type: fulltext``).

A JSON-lines file, one question a line::

    {"id": "ft1", "question": "...", "doc_id": "10.1186/1471-2180-11-174",
     "section": "methods", "gold": "Some experiments were performed by ..."}

``doc_id`` names the paper in the experiment's corpus (the papers ingested), ``section``
the section kind the answer sits in (:func:`sciera.corpus.fulltext.sections.section_kinds`)
and ``gold`` the answering sentence verbatim. The judgments are passages: the passages of
``doc_id`` in the corpus whose text holds the gold sentence (relevant, grade 1), so the
loader reads the corpus's store (``corpus``) and a gold sentence no passage holds is an
error naming its record. ``benchmarks/experiments/fulltext_questions.jsonl`` is such a file.
"""

from __future__ import annotations

import json
from pathlib import Path

from sciera.datasets.loaders import EvalDataset
from sciera.errors import InputError, ScieraError

FIELDS = ("id", "question", "doc_id", "section", "gold")


def read_questions(path: Path) -> list[dict[str, str]]:
    """The question records of ``path``, each checked to have every field as text."""
    out = []
    with open(path, encoding="utf-8") as handle:
        for line_no, line in enumerate(handle, start=1):
            if not line.strip():
                continue
            try:
                record = json.loads(line)
            except json.JSONDecodeError as exc:
                raise InputError(path, line_no, "record", f"not JSON: {exc.msg}") from None
            for name in FIELDS:
                value = record.get(name) if isinstance(record, dict) else None
                if not isinstance(value, str) or not value.strip():
                    raise InputError(path, line_no, name, "missing or not a non-empty string")
            out.append(record)
    return out


def load_fulltext(
    path: Path, *, split: str | None = None, corpus: Path | None = None
) -> EvalDataset:
    """The questions of ``path``, judged against the passages of ``corpus``; ``split``
    keeps the questions of one section kind (``methods``, ``results``, ...)."""
    from sciera.corpus import PassageStore

    if corpus is None:
        raise ScieraError(f"{path}: full-text questions are judged in a corpus; name it (corpus:)")
    questions = [q for q in read_questions(path) if split is None or q["section"] == split]
    qrels: dict[str, dict[str, int]] = {}
    with PassageStore.open(corpus) as store:
        for q in questions:
            passages = store.document_passages(q["doc_id"])
            holding = [p.passage_id for p in passages if q["gold"] in p.text]
            if not holding:
                raise ScieraError(
                    f"{path}: question {q['id']}: no passage of {q['doc_id']!r} in {corpus} "
                    "holds its gold sentence"
                )
            qrels[q["id"]] = dict.fromkeys(holding, 1)
    queries = {q["id"]: q["question"] for q in questions}
    return EvalDataset(name=Path(path).stem, unit="passage", queries=queries, qrels=qrels)
