"""BEIR folders: ``corpus.jsonl`` (+ ``queries.jsonl``, ``qrels/*.tsv``).

The corpus reader takes the folder (or its corpus.jsonl) and reads ``_id``,
``title`` and ``text``; a ``metadata`` object is kept as the document metadata,
and any other top-level field is added to it. :func:`load_beir_queries` and
:func:`load_qrels` load the evaluation side for other modules.
"""

from __future__ import annotations

from collections.abc import Mapping
from pathlib import Path
from typing import Any, ClassVar

from sciera.corpus.readers._fields import json_object, required_id, required_text
from sciera.corpus.readers.base import Fields
from sciera.corpus.readers.jsonl import JsonlReader, iter_lines
from sciera.errors import InputError, ScieraError


class BeirReader(JsonlReader):
    name: ClassVar[str] = "beir"
    default_fields: ClassVar[Fields] = Fields(id="_id", title="title", text="text")

    def source_file(self, path: Path) -> Path:
        path = Path(path)
        if path.is_dir():
            corpus = path / "corpus.jsonl"
            if not corpus.is_file():
                raise ScieraError(f"{path}: not a BEIR folder (no corpus.jsonl)")
            return corpus
        return super().source_file(path)

    def metadata(
        self, file: Path, record_no: int, record: dict[str, Any], used: set[str]
    ) -> dict[str, Any]:
        nested = record.get("metadata")
        if nested is not None and not isinstance(nested, dict):
            raise InputError(file, record_no, "metadata", "not a JSON object")
        out = dict(nested or {})
        for key, value in record.items():
            if key not in used and key != "metadata":
                out[key] = value
        return out


def load_beir_queries(path: Path | str) -> dict[str, str]:
    """Query id -> query text from a BEIR folder's queries.jsonl (or that file itself)."""
    file = Path(path)
    if file.is_dir():
        file = file / "queries.jsonl"
    if not file.is_file():
        raise ScieraError(f"{file}: no such file")
    queries: dict[str, str] = {}
    for line_no, raw in iter_lines(file):
        record = json_object(file, line_no, raw)
        qid = required_id(file, line_no, record, "_id")
        if qid in queries:
            raise InputError(file, line_no, "_id", f"duplicate query id {qid!r}")
        queries[qid] = required_text(file, line_no, record, "text")
    return queries


def _relevance(file: Path, line_no: int, value: str) -> int:
    try:
        number = float(value)
    except ValueError:
        raise InputError(file, line_no, "score", f"not a number: {value!r}") from None
    if not number.is_integer():
        raise InputError(file, line_no, "score", f"not an integer: {value!r}")
    return int(number)


def relevant_docs(qrels: Mapping[str, Mapping[str, int]]) -> set[str]:
    """Every document judged relevant (grade > 0) for some query of ``qrels``."""
    return {d for judged in qrels.values() for d, grade in judged.items() if grade > 0}


def load_qrels(path: Path | str) -> dict[str, dict[str, int]]:
    """Relevance judgments: query id -> {doc id: grade}.

    Reads BEIR qrels (``query-id<TAB>corpus-id<TAB>score`` with a header line)
    and TREC qrels (``qid iteration docid grade``, tab or space separated, no
    header). Judgments with grade 0 are kept (they are judged non-relevant).
    """
    file = Path(path)
    if not file.is_file():
        raise ScieraError(f"{file}: no such file")
    qrels: dict[str, dict[str, int]] = {}
    with open(file, encoding="utf-8") as handle:
        for line_no, line in enumerate(handle, start=1):
            if not line.strip():
                continue
            cols = line.rstrip("\r\n").split("\t") if "\t" in line else line.split()
            cols = [c.strip() for c in cols]
            if len(cols) == 3:
                qid, doc_id, grade = cols
            elif len(cols) == 4:
                qid, _iteration, doc_id, grade = cols
            else:
                raise InputError(
                    file, line_no, "record", f"expected 3 or 4 columns, got {len(cols)}"
                )
            if line_no == 1 and not _is_number(grade):
                continue  # header: query-id corpus-id score
            rel = _relevance(file, line_no, grade)
            judged = qrels.setdefault(qid, {})
            if judged.get(doc_id, rel) != rel:
                raise InputError(
                    file,
                    line_no,
                    "score",
                    f"conflicting judgments for ({qid}, {doc_id}): {judged[doc_id]} and {rel}",
                )
            judged[doc_id] = rel
    return qrels


def load_beir_qrels(path: Path | str, split: str = "test") -> dict[str, dict[str, int]]:
    """Judgments of one split of a BEIR folder (``qrels/<split>.tsv``)."""
    return load_qrels(Path(path) / "qrels" / f"{split}.tsv")


def _is_number(value: str) -> bool:
    try:
        float(value)
    except ValueError:
        return False
    return True
