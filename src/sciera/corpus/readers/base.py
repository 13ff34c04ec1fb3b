"""The reader protocol shared by every corpus format, and the field-name overrides.

A reader turns one input (a file, or a BEIR folder) into ``(record_no, Document)``
pairs. It works in two steps so that ingest can resume and skip bad records:

* ``records(file)`` streams raw records cheaply (a line, a parsed XML element ...),
  each with its record number: the 1-based line number for line-oriented formats,
  the 1-based record index for XML and JSON arrays. Only a file-level problem
  (unreadable XML, a CSV header without the id column) raises here.
* ``parse(file, record_no, raw)`` turns one raw record into a :class:`Document` or
  raises :class:`~sciera.errors.InputError` naming file, record, field and problem.
  ``parse_with_sentences`` also returns the document's sentence boundaries when the
  format gives them (character spans into ``Document.text``; SciFact's sentence-split
  corpus), or None when the sentence splitter should find them (every other format).

``parse_record`` returns a :class:`ParsedRecord`: the document, its sentence spans, and
for a structured paper (JATS, PDF) its layout (section units) and reference list; ingest
calls it. Its default wraps ``parse_with_sentences`` (no layout, no references).

``read(path)`` chains both and is what most callers want. ``not_documents(file)`` says why a
file of a generic format (CSV, JSON lines) holds no documents at all, from its header or
first record; a folder ingest skips such a file (a manifest beside the papers).
"""

from __future__ import annotations

from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import Any, ClassVar, Protocol, runtime_checkable

from sciera.corpus.fulltext.model import Layout, Reference
from sciera.errors import ScieraError
from sciera.types import Document

SentenceSpans = tuple[tuple[int, int], ...]
"""``(start, end)`` character spans of a document's sentences in ``Document.text``, in order."""


@dataclass(frozen=True, slots=True)
class ParsedRecord:
    """One record as ingest stores it: the document, its sentence spans (None: split the
    text), and for a structured paper its layout (passages are cut inside each unit) and
    its references (stored apart, never passages)."""

    document: Document
    sentences: SentenceSpans | None = None
    layout: Layout | None = None
    references: tuple[Reference, ...] = ()


@dataclass(frozen=True, slots=True)
class Fields:
    """Field (column) names to read; ``None`` keeps the reader's default."""

    id: str | None = None
    title: str | None = None
    text: str | None = None

    def is_default(self) -> bool:
        return self.id is None and self.title is None and self.text is None

    def as_dict(self) -> dict[str, str | None]:
        return {"id": self.id, "title": self.title, "text": self.text}


@runtime_checkable
class Reader(Protocol):
    """Reads documents from one input. Implementations live one per module."""

    name: ClassVar[str]
    id_field: str
    gives_sentences: ClassVar[bool]
    """Whether the format gives each document's sentences (else the splitter finds them)."""

    def source_file(self, path: Path) -> Path:
        """The data file behind ``path`` (a BEIR folder's corpus.jsonl, else ``path``)."""
        ...

    def records(self, file: Path) -> Iterator[tuple[int, Any]]:
        """Raw records with their record numbers, in file order."""
        ...

    def parse(self, file: Path, record_no: int, raw: Any) -> Document:
        """One raw record as a Document; raises InputError on bad input."""
        ...

    def parse_with_sentences(
        self, file: Path, record_no: int, raw: Any
    ) -> tuple[Document, SentenceSpans | None]:
        """:meth:`parse` plus the sentence spans the format gives (None: split the text)."""
        ...

    def parse_record(self, file: Path, record_no: int, raw: Any) -> ParsedRecord:
        """The record as ingest stores it (layout and references for structured papers)."""
        ...

    def read(self, path: Path) -> Iterator[tuple[int, Document]]:
        """``(record_no, Document)`` for every record; stops at the first bad one."""
        ...

    def not_documents(self, file: Path) -> str | None:
        """Why ``file`` does not hold this format's documents at all (a table whose header
        has no id or text column: a manifest beside the papers), or None when it does or
        may. Damage is not judged here: reading the file reports it."""
        ...


class RecordReader:
    """Base class providing ``source_file`` and ``read`` on top of records/parse."""

    name: ClassVar[str] = ""
    id_field: str = "id"  # named in errors about the document id (e.g. duplicates)
    gives_sentences: ClassVar[bool] = False

    def source_file(self, path: Path) -> Path:
        path = Path(path)
        if not path.is_file():
            raise ScieraError(f"{path}: no such file")
        return path

    def records(self, file: Path) -> Iterator[tuple[int, Any]]:  # pragma: no cover - abstract
        raise NotImplementedError

    def parse(self, file: Path, record_no: int, raw: Any) -> Document:  # pragma: no cover
        raise NotImplementedError

    def parse_with_sentences(
        self, file: Path, record_no: int, raw: Any
    ) -> tuple[Document, SentenceSpans | None]:
        """Formats without sentence boundaries: the document, and None (split its text)."""
        return self.parse(file, record_no, raw), None

    def parse_record(self, file: Path, record_no: int, raw: Any) -> ParsedRecord:
        """Flat formats: the document and its sentence spans, no layout."""
        doc, spans = self.parse_with_sentences(file, record_no, raw)
        return ParsedRecord(doc, spans)

    def read(self, path: Path) -> Iterator[tuple[int, Document]]:
        file = self.source_file(Path(path))
        for record_no, raw in self.records(file):
            yield record_no, self.parse(file, record_no, raw)

    def not_documents(self, file: Path) -> str | None:
        """Formats told by their content (PDF, XML) or their shape: always documents."""
        return None


def reject_field_overrides(name: str, fields: Fields | None) -> None:
    """Formats with a fixed schema (PubMed, OpenAlex) take no field overrides."""
    if fields is not None and not fields.is_default():
        raise ScieraError(
            f"the {name} format has fixed fields; --id-field/--title-field/--text-field "
            "apply to the beir, jsonl and csv formats"
        )
