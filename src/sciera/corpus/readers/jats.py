"""JATS XML full-text articles (PMC Open Access ``.nxml``, eLife, PLOS, BMC): one paper
per file.

The file is the one record (:class:`~sciera.corpus.readers.paper.PaperReader`). The paper
(:func:`~sciera.corpus.fulltext.jats.parse_jats`) becomes one document whose id is the DOI
(lower-cased), else the PMCID, else the PMID, else the file name without its suffix; its
metadata holds title, authors, year, journal, DOI, PMID, PMCID and licence where the file
states them, and its layout keeps the sections, captions and tables apart. References are
returned apart from the text.
"""

from __future__ import annotations

from pathlib import Path
from typing import ClassVar

from sciera.corpus.fulltext.jats import JatsError, parse_jats
from sciera.corpus.fulltext.model import Paper
from sciera.corpus.readers.paper import PaperReader, paper_stem
from sciera.errors import InputError

__all__ = ["JatsReader", "paper_stem"]


class JatsReader(PaperReader):
    name: ClassVar[str] = "jats"
    id_field = "article-id"

    def parse_paper(self, file: Path, record_no: int, data: bytes) -> Paper:
        try:
            return parse_jats(data)
        except JatsError as err:
            raise InputError(file, record_no, err.field, err.problem) from err
