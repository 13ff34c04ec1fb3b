"""The part every one-paper-per-file reader shares (JATS XML, PDF).

The file is the one record (record number 1), read in ``parse`` so that a bad file is a
bad record (``--skip-bad`` skips it); a subclass turns its bytes into a
:class:`~sciera.corpus.fulltext.model.Paper`, raising ``InputError`` on bad input, and the
paper becomes one document (:func:`~sciera.corpus.fulltext.model.paper_document`) with its
layout and references.
"""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path
from typing import Any

from sciera.corpus.fulltext.model import Paper, paper_doc_id, paper_document
from sciera.corpus.readers._fields import open_binary
from sciera.corpus.readers.base import Fields, ParsedRecord, RecordReader, reject_field_overrides
from sciera.errors import InputError
from sciera.types import Document


def paper_stem(file: Path) -> str:
    """A file's name without its data suffixes (``a.nxml.gz`` -> ``a``)."""
    name = file.name[:-3] if file.name.endswith(".gz") else file.name
    return name.rpartition(".")[0] or name


class PaperReader(RecordReader):
    """A reader of one paper per file; subclasses implement :meth:`parse_paper`."""

    def __init__(self, fields: Fields | None = None) -> None:
        reject_field_overrides(self.name, fields)

    def records(self, file: Path) -> Iterator[tuple[int, Any]]:
        yield 1, file

    def parse_paper(self, file: Path, record_no: int, data: bytes) -> Paper:  # pragma: no cover
        raise NotImplementedError

    def parse_record(self, file: Path, record_no: int, raw: Any) -> ParsedRecord:
        try:
            with open_binary(Path(raw)) as handle:
                data = handle.read()
        except OSError as exc:
            raise InputError(
                file, record_no, "file", f"cannot read: {exc.strerror or exc}"
            ) from exc
        paper = self.parse_paper(file, record_no, data)
        laid = paper_document(paper, paper_doc_id(paper.meta, paper_stem(file)))
        return ParsedRecord(laid.document, None, laid.layout, laid.references)

    def parse(self, file: Path, record_no: int, raw: Any) -> Document:
        return self.parse_record(file, record_no, raw).document
