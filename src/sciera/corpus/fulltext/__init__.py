"""Full-text papers: the document model (:mod:`.model`), the JATS XML parser
(:mod:`.jats`), section kinds (:mod:`.sections`) and chunking inside sections
(:mod:`.chunk`)."""

from sciera.corpus.fulltext.model import (
    Block,
    Layout,
    Paper,
    PaperDocument,
    PaperMeta,
    Reference,
    Section,
    Unit,
    paper_doc_id,
    paper_document,
)
from sciera.corpus.fulltext.sections import KINDS, parse_section_filter, section_kinds

__all__ = [
    "KINDS",
    "Block",
    "Layout",
    "Paper",
    "PaperDocument",
    "PaperMeta",
    "Reference",
    "Section",
    "Unit",
    "paper_doc_id",
    "paper_document",
    "parse_section_filter",
    "section_kinds",
]
