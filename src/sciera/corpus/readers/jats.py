"""JATS XML full-text articles (PMC Open Access ``.nxml``, eLife, PLOS, BMC): one paper
per file.

The file is the one record (record number 1), read in ``parse`` so that a bad file is a
bad record (``--skip-bad`` skips it). The paper (:func:`~sciera.corpus.fulltext.jats.
parse_jats`) becomes one document whose id is the DOI (lower-cased), else the PMCID, else
the PMID, else the file name without its suffix; its metadata holds title, authors, year,
journal, DOI, PMID, PMCID and licence where the file states them, and its layout keeps the
sections, captions and tables apart. References are returned apart from the text.
"""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path
from typing import Any, ClassVar

from sciera.corpus.fulltext.jats import JatsError, parse_jats
from sciera.corpus.fulltext.model import paper_doc_id, paper_document
from sciera.corpus.readers._fields import open_binary
from sciera.corpus.readers.base import Fields, ParsedRecord, RecordReader, reject_field_overrides
from sciera.errors import InputError
from sciera.types import Document


def paper_stem(file: Path) -> str:
    """A file's name without its data suffixes (``a.nxml.gz`` -> ``a``)."""
    name = file.name[:-3] if file.name.endswith(".gz") else file.name
    return name.rpartition(".")[0] or name


class JatsReader(RecordReader):
    name: ClassVar[str] = "jats"
    id_field = "article-id"

    def __init__(self, fields: Fields | None = None) -> None:
        reject_field_overrides(self.name, fields)

    def records(self, file: Path) -> Iterator[tuple[int, Any]]:
        yield 1, file

    def parse_record(self, file: Path, record_no: int, raw: Any) -> ParsedRecord:
        try:
            with open_binary(Path(raw)) as handle:
                data = handle.read()
        except OSError as exc:
            raise InputError(
                file, record_no, "file", f"cannot read: {exc.strerror or exc}"
            ) from exc
        try:
            paper = parse_jats(data)
        except JatsError as err:
            raise InputError(file, record_no, err.field, err.problem) from err
        laid = paper_document(paper, paper_doc_id(paper.meta, paper_stem(file)))
        return ParsedRecord(laid.document, None, laid.layout, laid.references)

    def parse(self, file: Path, record_no: int, raw: Any) -> Document:
        return self.parse_record(file, record_no, raw).document
