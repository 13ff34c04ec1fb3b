"""PDF papers through pypdfium2 (``pip install sciera[pdf]``): one paper per file.

As for JATS (:mod:`sciera.corpus.readers.jats`), the file is the one record and is read
in ``parse``, so a bad file is a bad record that ``--skip-bad`` skips. The paper
(:func:`~sciera.corpus.fulltext.pdf.parse_pdf`) becomes one document whose id is the DOI
its running heads repeat (lower-cased), else the file name without ``.pdf``. An empty
file, a file that is not a PDF, an encrypted, broken or truncated one and one with no
text layer are one-line errors naming the file.
"""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path
from typing import Any, ClassVar

from sciera.corpus.fulltext.model import paper_doc_id, paper_document
from sciera.corpus.fulltext.pdf import PdfError, parse_pdf
from sciera.corpus.readers.base import Fields, ParsedRecord, RecordReader, reject_field_overrides
from sciera.corpus.readers.jats import paper_stem
from sciera.errors import InputError
from sciera.types import Document


class PdfReader(RecordReader):
    name: ClassVar[str] = "pdf"
    id_field = "doi"

    def __init__(self, fields: Fields | None = None) -> None:
        reject_field_overrides(self.name, fields)

    def records(self, file: Path) -> Iterator[tuple[int, Any]]:
        yield 1, file

    def parse_record(self, file: Path, record_no: int, raw: Any) -> ParsedRecord:
        try:
            data = Path(raw).read_bytes()
        except OSError as exc:
            raise InputError(
                file, record_no, "file", f"cannot read: {exc.strerror or exc}"
            ) from exc
        try:
            paper = parse_pdf(data, fallback_title=paper_stem(file))
        except PdfError as err:
            raise InputError(file, record_no, err.field, err.problem) from err
        laid = paper_document(paper, paper_doc_id(paper.meta, paper_stem(file)))
        return ParsedRecord(laid.document, None, laid.layout, laid.references)

    def parse(self, file: Path, record_no: int, raw: Any) -> Document:
        return self.parse_record(file, record_no, raw).document
