"""PDF papers through pypdfium2 (``pip install sciera[pdf]``): one paper per file.

As for JATS, the file is the one record (:class:`~sciera.corpus.readers.paper.PaperReader`),
so a bad file is a bad record that ``--skip-bad`` skips. The paper
(:func:`~sciera.corpus.fulltext.pdf.parse_pdf`) becomes one document whose id is the DOI
its running heads repeat (lower-cased), else the file name without ``.pdf``. An empty
file, a file that is not a PDF, an encrypted, broken or truncated one and one with no
text layer are one-line errors naming the file.
"""

from __future__ import annotations

from pathlib import Path
from typing import ClassVar

from sciera.corpus.fulltext.model import Paper
from sciera.corpus.fulltext.pdf import PdfError, parse_pdf
from sciera.corpus.readers.paper import PaperReader, paper_stem
from sciera.errors import InputError


class PdfReader(PaperReader):
    name: ClassVar[str] = "pdf"
    id_field = "doi"

    def parse_paper(self, file: Path, record_no: int, data: bytes) -> Paper:
        try:
            return parse_pdf(data, fallback_title=paper_stem(file))
        except PdfError as err:
            raise InputError(file, record_no, err.field, err.problem) from err
