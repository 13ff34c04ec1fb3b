"""SciFact's sentence-split corpus (``corpus_sentences.jsonl``, and the ``corpus.jsonl`` of
SciFact's own data release, file or folder): abstracts as sentence lists.

One JSON object per line: ``{"doc_id": 4983, "title": "...", "abstract": ["First
sentence.", "Second sentence.", ...], "structured": false}``. The sentence list is kept
exactly: a claim's rationale indices point into it, so the stored sentence ``i`` of a
document is ``abstract[i]``, character for character (trailing spaces and newlines
included). The document text is the sentences joined by one space; every other field
(``structured``) is kept in the metadata. The schema is fixed (no field overrides).
"""

from __future__ import annotations

from pathlib import Path
from typing import Any, ClassVar

from sciera.corpus.readers._fields import json_object, optional_text, required_id
from sciera.corpus.readers.base import Fields, SentenceSpans, reject_field_overrides
from sciera.corpus.readers.jsonl import JsonlReader
from sciera.errors import InputError
from sciera.types import Document

SENTENCES_FIELD = "abstract"
SEPARATOR = " "


def looks_like_scifact_sentences(record: Any) -> bool:
    """Whether a parsed first record has SciFact's sentence-split shape."""
    return (
        isinstance(record, dict)
        and "doc_id" in record
        and isinstance(record.get(SENTENCES_FIELD), list)
        and all(isinstance(s, str) for s in record[SENTENCES_FIELD])
    )


class ScifactSentencesReader(JsonlReader):
    name: ClassVar[str] = "scifact-sentences"
    gives_sentences: ClassVar[bool] = True
    default_fields: ClassVar[Fields] = Fields(id="doc_id", title="title", text=SENTENCES_FIELD)

    def __init__(self, fields: Fields | None = None) -> None:
        reject_field_overrides(self.name, fields)
        super().__init__(None)
        self._id_fallback = False

    def source_file(self, path: Path) -> Path:
        """``path``, or the corpus.jsonl of a folder (SciFact's data release)."""
        path = Path(path)
        if path.is_dir() and (path / "corpus.jsonl").is_file():
            return path / "corpus.jsonl"
        return super().source_file(path)

    def parse(self, file: Path, record_no: int, raw: Any) -> Document:
        return self.parse_with_sentences(file, record_no, raw)[0]

    def parse_with_sentences(
        self, file: Path, record_no: int, raw: Any
    ) -> tuple[Document, SentenceSpans | None]:
        record = json_object(file, record_no, raw)
        doc_id = required_id(file, record_no, record, "doc_id")
        title = optional_text(file, record_no, record, "title")
        sentences = record.get(SENTENCES_FIELD)
        if sentences is None:
            raise InputError(file, record_no, SENTENCES_FIELD, "missing")
        if not isinstance(sentences, list):
            raise InputError(file, record_no, SENTENCES_FIELD, "not a list of sentences")
        for i, sentence in enumerate(sentences):
            if not isinstance(sentence, str):
                raise InputError(file, record_no, f"{SENTENCES_FIELD}[{i}]", "not a string")
        if not any(s.strip() for s in sentences) and not title.strip():
            raise InputError(
                file, record_no, SENTENCES_FIELD, "no sentence, and no title: nothing to index"
            )
        spans: list[tuple[int, int]] = []
        at = 0
        for sentence in sentences:
            spans.append((at, at + len(sentence)))
            at += len(sentence) + len(SEPARATOR)
        metadata = {k: v for k, v in record.items() if k not in ("doc_id", "title", "abstract")}
        doc = Document(doc_id, title, SEPARATOR.join(sentences), metadata)
        return doc, tuple(spans)
