"""The document model of a structured paper (JATS XML or PDF), shared by its readers.

A :class:`Paper` is its metadata, a flat list of :class:`Section` in reading order (each
with its heading path, so ``("Methods", "Cell culture")`` is a subsection of Methods) and
the parsed reference list. A section holds :class:`Block` s: paragraphs, figure/table
captions and tables (one text row per table row). References are kept apart: they never
become passages.

:func:`paper_document` lays a paper out as one :class:`~sciera.types.Document` whose text
is the blocks joined by blank lines, plus a :data:`Layout`: one :class:`Unit` per run of
paragraphs of one section and one per caption or table, with character spans into the
text. Passages are cut inside units, so a passage never straddles a section.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Literal

from sciera.types import Document

BlockKind = Literal["paragraph", "caption", "table"]


@dataclass(frozen=True, slots=True)
class Block:
    """One paragraph, caption or table of a section. A table's ``text`` is its rows, one
    per line, cells separated by ``" | "``; ``label`` names a figure or table ("Figure 2")."""

    kind: BlockKind
    text: str
    label: str = ""


@dataclass(frozen=True, slots=True)
class Section:
    """One section or subsection: ``path`` holds the headings from the top level down
    (``level == len(path)``); ``blocks`` are its own, not its subsections'."""

    path: tuple[str, ...]
    blocks: tuple[Block, ...] = ()
    sec_type: str = ""  # JATS ``sec-type`` (e.g. "materials|methods"), when the file gives it

    @property
    def title(self) -> str:
        return self.path[-1] if self.path else ""

    @property
    def level(self) -> int:
        return len(self.path)


@dataclass(frozen=True, slots=True)
class Reference:
    """One entry of a paper's reference list, with what the file states of it."""

    label: str
    text: str
    title: str = ""
    authors: tuple[str, ...] = ()
    year: str = ""
    journal: str = ""
    doi: str = ""
    pmid: str = ""


@dataclass(frozen=True, slots=True)
class PaperMeta:
    """What the file states about the paper; empty strings when it does not."""

    title: str = ""
    authors: tuple[str, ...] = ()
    year: str = ""
    journal: str = ""
    doi: str = ""
    pmid: str = ""
    pmcid: str = ""
    licence: str = ""
    licence_url: str = ""

    def as_metadata(self) -> dict[str, object]:
        """The non-empty fields, for ``Document.metadata`` (authors as a list)."""
        out: dict[str, object] = {}
        for name in ("year", "journal", "doi", "pmid", "pmcid", "licence", "licence_url"):
            value = getattr(self, name)
            if value:
                out[name] = value
        if self.authors:
            out["authors"] = list(self.authors)
        return out


@dataclass(frozen=True, slots=True)
class Paper:
    """A structured paper: metadata, sections in reading order, references."""

    meta: PaperMeta
    sections: tuple[Section, ...]
    references: tuple[Reference, ...] = ()
    source_format: str = ""  # "jats" or "pdf"
    pages: int = 0  # pages read (PDF), 0 when the format has none

    def body_text(self) -> str:
        """Every block's text in order, blank lines between (what ingest stores)."""
        return "\n\n".join(b.text for s in self.sections for b in s.blocks)


UnitKind = Literal["text", "caption", "table"]


@dataclass(frozen=True, slots=True)
class Unit:
    """A span of a paper document's text that passages are cut within: the paragraphs of
    one section, or one caption, or one table. ``section`` is the top-level heading,
    ``subsection`` the headings below it joined by ``" > "``; ``label`` names a figure or
    table. A table's sentences are its rows."""

    start: int
    end: int
    section: str
    subsection: str = ""
    kind: UnitKind = "text"
    label: str = ""


Layout = tuple[Unit, ...]


@dataclass(frozen=True, slots=True)
class PaperDocument:
    """A paper as a stored document: the document, its layout and its references."""

    document: Document
    layout: Layout
    references: tuple[Reference, ...] = field(default=())


def paper_doc_id(meta: PaperMeta, fallback: str) -> str:
    """A paper's document id: its DOI (lower-cased), else ``PMC...``, else its PMID, else
    ``fallback`` (the file name without its suffix). The same paper read from its XML
    and from its PDF gets the same id when both state the DOI."""
    if meta.doi:
        return meta.doi.lower()
    return meta.pmcid or meta.pmid or fallback


def paper_document(
    paper: Paper, doc_id: str, extra: dict[str, object] | None = None
) -> PaperDocument:
    """``paper`` as one document (blocks joined by blank lines) and its layout."""
    parts: list[str] = []
    units: list[Unit] = []
    offset = 0
    for section in paper.sections:
        top = section.path[0] if section.path else ""
        sub = " > ".join(section.path[1:])
        for block in section.blocks:
            text = block.text.strip()
            if not text:
                continue
            if parts:
                offset += 2  # the blank line before this block
            start, offset = offset, offset + len(text)
            parts.append(text)
            kind: UnitKind = "text" if block.kind == "paragraph" else block.kind
            last = units[-1] if units else None
            if (
                kind == "text"
                and last is not None
                and last.kind == "text"
                and (last.section, last.subsection) == (top, sub)
            ):
                units[-1] = Unit(last.start, offset, top, sub, "text")
            else:
                units.append(Unit(start, offset, top, sub, kind, block.label))
    metadata: dict[str, object] = {**paper.meta.as_metadata(), "format": paper.source_format}
    if paper.pages:
        metadata["pages"] = paper.pages
    metadata["references"] = len(paper.references)
    metadata.update(extra or {})
    doc = Document(
        doc_id=doc_id, title=paper.meta.title, text="\n\n".join(parts), metadata=metadata
    )
    return PaperDocument(doc, tuple(units), paper.references)
