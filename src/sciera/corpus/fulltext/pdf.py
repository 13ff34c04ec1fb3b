"""PDF papers as a :class:`Paper`, through pypdfium2 (PDFium: offline, Apache-2.0/BSD).

Pages are loaded and closed one at a time, so PDFium's page objects never pile up (only
their lines of text are kept; a 1,008-page PDF peaked at 149 MB).
Each page's characters become lines with their font size (PDFium's loose character box,
which is the font's height whatever the text matrix) and position. Then:

* **headers and footers**: a line in the top or bottom 10% of a page whose text, digits
  blanked, recurs on at least two pages and a third of them ("Smith et al. eLife 2015;4:e1.
  2 of 7"), and a line that is only a page number ("7", "7 of 12"), is dropped;
* **headings**: a short line (at most 20 words) set larger than the body text is a
  heading; headings of known section names (Abstract, Introduction, Methods, Results,
  Discussion ...) are top-level, the others nest by font size under the current one;
* **paragraphs**: lines are joined until a vertical gap larger than 1.5 line pitches, a
  heading or a change of font size; a word hyphenated at a line break ("treat- | ment",
  or PDFium's soft hyphen) is joined again;
* **captions**: a paragraph starting "Figure N." / "Table N:" is a caption block;
* **tables**: a line whose characters leave two or more gaps wider than the font's
  height is a table row; two or more such rows in a run are a table block, one line per
  row, cells separated by " | " (as JATS tables are), labelled by a caption just before;
* **references**: the lines under a "References" heading become :class:`Reference` s
  (an entry starts at a numbered label or a capitalized surname with initials).

The body text's size is that of the lines after known headings. The largest line of
page 1 is the title. The text after the title block and before the first heading is the
abstract, or front matter that is left out when an "Abstract" heading follows (a paper
with no heading at all is one "Main text"). A paragraph broken by a column or a page goes
on when its last line did not end a sentence and the next starts in lower case. The DOI
is the one the running heads or feet repeat (else the first on page 1); the Creative
Commons licence is read from page 1 when it states it. Tables are not rebuilt from a
PDF: their cells stay lines of text.

Errors are :class:`PdfError` with a field and a one-line problem: an empty file, a file
that is not a PDF, an encrypted one (password required), a broken or truncated one, and
one with no text layer (scanned pages).
"""

from __future__ import annotations

import ctypes
import re
from collections import Counter
from dataclasses import dataclass, field
from itertools import pairwise
from pathlib import Path

from sciera.corpus.fulltext.model import Block, Paper, PaperMeta, Reference, Section
from sciera.corpus.fulltext.sections import section_kinds
from sciera.errors import require


class PdfError(ValueError):
    """A PDF that cannot be read: ``field`` and a one-line ``problem``."""

    def __init__(self, field: str, problem: str) -> None:
        self.field, self.problem = field, problem
        super().__init__(f"{field}: {problem}")


@dataclass(frozen=True, slots=True)
class Line:
    """One text line of a page: its text, font size, vertical extent and page."""

    text: str
    size: float
    top: float
    bottom: float
    page: int
    height: float  # of the page
    cells: tuple[str, ...] = ()  # a table row: three or more cells apart by wide gaps

    @property
    def edge(self) -> bool:
        """In the top or bottom tenth of the page (where running heads and feet sit)."""
        return self.top > 0.9 * self.height or self.bottom < 0.1 * self.height


_SOFT = "\x02\xad\ufffe"
_PAGE_NUMBER = re.compile(r"^\s*(page\s*)?\d{1,4}(\s*(of|/)\s*\d{1,4})?\s*$", re.IGNORECASE)
_CAPTION = re.compile(
    r"^((?:Supplementary |Supplemental )?(?:Figure|Fig\.|Table)\s*\d+[A-Za-z]?)[.:|]"
)
_DOI = re.compile(r"\b(10\.\d{4,9}/[^\s\"<>]+[^\s\"<>.,;)])")
_CC = re.compile(r"creativecommons\.org/(licenses|publicdomain)/([a-z-]+)/(\d\.\d)", re.I)
_SENTENCE_END = re.compile(r"[.?!:][\"'’”)\]]*\s*$")
_KNOWN = re.compile(
    r"^(\d+\.?\s+)?(abstract|introduction|background|results|discussion|results and discussion|"
    r"(materials and |patients and )?methods|conclusions?|acknowledge?ments|references|"
    r"elife digest|author summary)$",
    re.IGNORECASE,
)
_REF_START = re.compile(
    r"^(\[\d+\]|\d{1,3}\.\s|[A-Z][A-Za-z'’\-]+(?: [a-z]{1,3})? [A-Z]{1,3}[,.]\s?)"
)


def _pdfium():  # type: ignore[no-untyped-def]
    return require("pypdfium2", "pdf")


def read_lines(data: bytes) -> tuple[list[list[Line]], dict[str, str]]:
    """Every page's lines (in PDFium's reading order) and the document metadata."""
    if not data.strip():
        raise PdfError("file", "empty file")
    if not data.lstrip()[:5] == b"%PDF-":
        raise PdfError("file", "not a PDF (no %PDF- header)")
    pdfium = _pdfium()
    raw = pdfium.raw
    try:
        doc = pdfium.PdfDocument(data)
    except pdfium.PdfiumError as exc:
        message = str(exc)
        if "password" in message.lower():
            raise PdfError("encryption", "encrypted PDF (a password is required)") from exc
        raise PdfError("pdf", f"broken or truncated PDF ({message.rstrip('.')})") from exc
    try:
        meta = {k: v for k, v in doc.get_metadata_dict().items() if v}
        pages = []
        rect = raw.FS_RECTF()
        for number in range(len(doc)):
            try:
                page = doc[number]
            except pdfium.PdfiumError as exc:
                raise PdfError("pdf", f"page {number + 1} cannot be loaded ({exc})") from exc
            try:
                height = page.get_height()
                textpage = page.get_textpage()
                try:
                    pages.append(_page_lines(raw, textpage.raw, rect, number, height))
                finally:
                    textpage.close()
            finally:
                page.close()
    finally:
        doc.close()
    if not any(pages):
        raise PdfError("text", "no text layer (scanned pages?); run OCR on it first")
    return pages, meta


def _page_lines(raw, textpage, rect, number: int, height: float) -> list[Line]:  # type: ignore[no-untyped-def]
    """The page's lines; a gap wider than the font's height between two characters of a
    line starts a new cell (marked with a tab while the line is read)."""
    lines: list[Line] = []
    chars: list[str] = []
    sizes: list[float] = []
    top = bottom = 0.0
    right: float | None = None

    def flush() -> None:
        nonlocal chars, sizes, top, bottom, right
        text = "".join(chars).replace("\r", "")
        if text.strip():
            size = Counter(sizes).most_common(1)[0][0] if sizes else 0.0
            cells = tuple(c.strip() for c in text.split("\t")) if text.count("\t") >= 2 else ()
            flat = " ".join(text.replace("\t", " ").split())
            lines.append(Line(flat, size, top, bottom, number, height, cells))
        chars, sizes, top, bottom, right = [], [], 0.0, 0.0, None

    for i in range(raw.FPDFText_CountChars(textpage)):
        char = chr(raw.FPDFText_GetUnicode(textpage, i))
        if char == "\n":
            flush()
            continue
        if char == "\r":
            continue
        if not char.isspace() and raw.FPDFText_GetLooseCharBox(textpage, i, ctypes.byref(rect)):
            size = rect.top - rect.bottom
            if right is not None and rect.left - right > size:
                chars.append("\t")
            right = rect.right
            sizes.append(round(size, 1))
            top = max(top, rect.top)
            bottom = rect.bottom if not bottom else min(bottom, rect.bottom)
        chars.append(char)
    flush()
    return lines


def _running_lines(pages: list[list[Line]]) -> set[str]:
    """Digit-blanked texts of edge lines that recur on several pages."""
    if len(pages) < 2:
        return set()
    seen: Counter[str] = Counter()
    for lines in pages:
        seen.update({_shape(line.text) for line in lines if line.edge})
    need = max(2, len(pages) // 3)
    return {shape for shape, count in seen.items() if count >= need}


def _shape(text: str) -> str:
    return re.sub(r"\d+", "#", " ".join(text.split())).lower()


def join_lines(lines: list[str]) -> str:
    """The lines of one paragraph as one text (in linear time), undoing a hyphen put in at
    a line break: PDFium's soft hyphen, or "-" between letters before a lower-case letter;
    a line ending in "-" or "/" otherwise joins the next without a space."""
    parts: list[str] = []
    for line in lines:
        last = parts[-1] if parts else ""
        soft = bool(last) and last[-1] in _SOFT
        broken = bool(re.search(r"[A-Za-z]-$", last)) and line[:1].islower()
        if not parts:
            parts.append(line)
        elif soft or broken:
            parts[-1] = last[:-1]
            parts.append(line)
        elif last.endswith(("-", "/")):
            parts.append(line)
        else:
            parts.extend((" ", line))
    return "".join(parts)


def parse_pdf(data: bytes, *, fallback_title: str = "") -> Paper:
    """The paper in one PDF file's bytes; raises :class:`PdfError` on unusable input."""
    pages, pdf_meta = read_lines(data)
    doi = _article_doi(pages)
    lines = _text_lines(pages)
    sizes, title = _font_sizes(lines)
    read = _read_sections(lines, sizes)
    sections = read.sections
    _front_matter(sections)
    references = [Reference(label=str(n), text=text) for n, text in enumerate(read.ref_lines, 1)]
    first_text = " ".join(line.text for line in pages[0])
    return Paper(
        meta=PaperMeta(
            title=title or pdf_meta.get("Title", "") or fallback_title,
            authors=tuple(a.strip() for a in pdf_meta.get("Author", "").split(";") if a.strip()),
            doi=doi,
            licence=_licence(first_text),
        ),
        sections=tuple(sections),
        references=tuple(references),
        source_format="pdf",
        pages=len(pages),
    )


def _text_lines(pages: list[list[Line]]) -> list[Line]:
    """The pages' lines without page numbers and running heads or feet, drop caps joined;
    :class:`PdfError` when none are left."""
    running = _running_lines(pages)
    lines = _join_drop_caps(
        [
            line
            for page in pages
            for line in page
            if not _PAGE_NUMBER.match(line.text)
            and not (line.edge and _shape(line.text) in running)
        ]
    )
    if not lines:
        raise PdfError("text", "no text left after removing running heads and page numbers")
    return lines


@dataclass(frozen=True, slots=True)
class _Sizes:
    """The font sizes that tell the text apart: the body's, the title's, the headings'
    (largest first) and the top-level headings' (known ones such as Methods)."""

    body: float
    title: float
    headings: list[float]
    top: float

    def is_heading(self, line: Line, front: bool) -> bool:
        """A known heading, or a line in a heading size (off the first page's front matter)
        with at least three letters."""
        return bool(_KNOWN.match(line.text.strip())) or (
            line.size in self.headings
            and not (front and line.page == 0)
            and len(re.findall(r"[A-Za-z]", line.text)) >= 3
        )


def _font_sizes(lines: list[Line]) -> tuple[_Sizes, str]:
    """The font sizes of the text and the title: page 1's lines (of two or more words)
    in its largest size."""
    body_size = _body_size(lines)
    first_page = [line for line in lines if line.page == 0 and len(line.text.split()) > 1]
    title_size = max(line.size for line in first_page) if first_page else 0.0
    title = " ".join(line.text for line in first_page if line.size == title_size).strip()

    heading_sizes = sorted(
        {
            line.size
            for line in lines
            if line.size >= body_size + 1.0 and len(line.text.split()) <= 20
        },
        reverse=True,
    )
    if title_size in heading_sizes and all(
        line.page == 0 for line in lines if line.size == title_size
    ):
        heading_sizes.remove(title_size)
    known = Counter(line.size for line in lines if _KNOWN.match(line.text.strip()))
    top_size = known.most_common(1)[0][0] if known else (heading_sizes or [body_size])[0]
    return _Sizes(body_size, title_size, heading_sizes, top_size), title


@dataclass
class _Reader:
    """The sections read so far: the open heading path with its font sizes, the open
    section's blocks and paragraph, and the reference list once under References."""

    sections: list[Section] = field(default_factory=list)
    path: tuple[str, ...] = ("Main text",)
    sizes_on_path: list[float] = field(default_factory=lambda: [float("inf")])
    blocks: list[Block] = field(default_factory=list)
    paragraph: list[str] = field(default_factory=list)
    para_size: float = 0.0
    in_references: bool = False
    ref_lines: list[str] = field(default_factory=list)
    previous: Line | None = None
    front: bool = True  # page 1 before its first heading: title, authors, affiliations

    def end_paragraph(self) -> None:
        if self.paragraph:
            text = join_lines(self.paragraph).replace("\x02", "").replace("\xad", "").strip()
            if self.in_references:
                self.ref_lines.append(text)
            elif text:
                match = _CAPTION.match(text)
                self.blocks.append(
                    Block("caption", text, match.group(1)) if match else Block("paragraph", text)
                )
        self.paragraph = []

    def end_section(self) -> None:
        self.end_paragraph()
        if self.blocks:
            self.sections.append(Section(self.path, tuple(self.blocks)))
        self.blocks = []

    def heading(self, heading: str, size: float, top_size: float) -> None:
        """Open a section: top level when known, set in the top size or in the front
        matter, else nested under the deepest open heading set larger than it."""
        self.end_section()
        self.in_references = "references" in section_kinds(heading)
        if _KNOWN.match(heading) or size >= top_size - 0.05 or self.front:
            self.path, self.sizes_on_path = (heading,), [size]
        else:
            while len(self.path) > 1 and self.sizes_on_path[-1] <= size + 0.05:
                self.path, self.sizes_on_path = self.path[:-1], self.sizes_on_path[:-1]
            self.path, self.sizes_on_path = (*self.path, heading), [*self.sizes_on_path, size]
        self.front = False
        self.previous = None

    def table(self, rows: list[Line]) -> None:
        """A table block of the rows' cells, labelled by the caption just before it."""
        self.end_paragraph()
        last = self.blocks[-1] if self.blocks else None
        label = last.label if last is not None and last.kind == "caption" else ""
        cells = (" | ".join(c for c in row.cells if c) for row in rows)
        self.blocks.append(Block("table", "\n".join(cells), label))
        self.previous = None

    def text(self, line: Line, body_size: float) -> None:
        """A body line: it goes on with the paragraph or starts a new one."""
        previous = self.previous
        pitch = max(body_size * 1.5, 1.0)
        # a new column or page goes on with the paragraph unless the last line ended one
        moved = previous is not None and (line.page != previous.page or line.top > previous.top)
        new_paragraph = (
            previous is None
            or abs(line.size - self.para_size) > 0.6
            or (not moved and previous.bottom - line.top > 0.5 * pitch)
            or (moved and not _continues(previous.text, line.text))
            or bool(self.in_references and _REF_START.match(line.text) and self.paragraph)
            or bool(_CAPTION.match(line.text))
        )
        if new_paragraph:
            self.end_paragraph()
            self.para_size = line.size
        self.paragraph.append(line.text.strip())
        self.previous = line


def _read_sections(lines: list[Line], sizes: _Sizes) -> _Reader:
    """Read the lines in order into sections (headings, paragraphs, captions, tables) and
    the reference list; the title's lines on page 1 are skipped."""
    read = _Reader()
    i = 0
    while i < len(lines):
        line = lines[i]
        if read.front and line.page == 0 and line.size == sizes.title:
            i += 1
            continue
        if sizes.is_heading(line, read.front):
            heading, i = _heading_at(lines, i)
            read.heading(heading, line.size, sizes.top)
            continue
        if line.cells and not read.in_references:  # two or more rows in a run: a table
            run = i
            while run < len(lines) and lines[run].cells and lines[run].page == line.page:
                run += 1
            if run - i >= 2:
                read.table(lines[i:run])
                i = run
                continue
        read.text(line, sizes.body)
        i += 1
    read.end_section()
    return read


def _heading_at(lines: list[Line], i: int) -> tuple[str, int]:
    """The heading at ``lines[i]``, perhaps wrapped onto following lines of the same size,
    without its number ("2.1 Cell culture"), and the index of the line after it."""
    line = lines[i]
    words = [line.text.strip()]
    while (
        i + 1 < len(lines)
        and lines[i + 1].size == line.size
        and lines[i + 1].page == line.page
        and not _KNOWN.match(line.text.strip())
        and len(" ".join(words).split()) < 40
    ):
        i += 1
        words.append(lines[i].text.strip())
    heading = " ".join(words)
    heading = re.sub(r"^\d+(\.\d+)*\.?\s+", "", heading)  # "2.1 Cell culture"
    return heading, i + 1


def _front_matter(sections: list[Section]) -> None:
    """The text before the first heading: dropped when an Abstract section follows (it is
    authors and affiliations), else it is the abstract."""
    if len(sections) > 1 and sections[0].path == ("Main text",):
        if any(section.path[0].lower() == "abstract" for section in sections):
            sections.pop(0)  # front matter (authors, affiliations) before "Abstract"
        else:  # the text between the title block and the first heading is the abstract
            sections[0] = Section(("Abstract",), sections[0].blocks)


def _continues(previous: str, line: str) -> bool:
    """Whether ``line``, at the top of a new column or page, goes on with the paragraph
    of ``previous``: that did not end a sentence and this starts in lower case."""
    return not _SENTENCE_END.search(previous) and line.lstrip()[:1].islower()


def _body_size(lines: list[Line]) -> float:
    """The body text's font size: the size of the lines that follow known section
    headings (Introduction, Methods ...), else the size holding the most characters
    (which a long reference list in small type can be)."""
    after: Counter[float] = Counter()
    for line, nxt in pairwise(lines):
        heading = line.text.strip()
        if _KNOWN.match(heading) and "reference" not in heading.lower():
            after[nxt.size] += 1
    if after:
        return after.most_common(1)[0][0]
    chars: Counter[float] = Counter()
    for line in lines:
        chars[line.size] += len(line.text)
    return chars.most_common(1)[0][0]


def _article_doi(pages: list[list[Line]]) -> str:
    """The DOI the running heads or feet repeat (the article's), else the first on page 1."""
    edge: Counter[str] = Counter()
    for page in pages:
        edge.update({m.group(1) for line in page if line.edge for m in _DOI.finditer(line.text)})
    common = [doi for doi, count in edge.most_common() if count >= 2]
    if common:
        return common[0]
    match = _DOI.search(" ".join(line.text for line in pages[0]))
    return match.group(1) if match else ""


def _join_drop_caps(lines: list[Line]) -> list[Line]:
    """A one-letter line set large (a drop cap, "I") joined to the line after it ("n 2011")."""
    out: list[Line] = []
    i = 0
    while i < len(lines):
        line = lines[i]
        nxt = lines[i + 1] if i + 1 < len(lines) else None
        if (
            nxt is not None
            and len(line.text.strip()) == 1
            and line.text.strip().isalpha()
            and line.size > nxt.size
            and nxt.text[:1].islower()
        ):
            out.append(
                Line(
                    line.text.strip() + nxt.text,
                    nxt.size,
                    nxt.top,
                    nxt.bottom,
                    nxt.page,
                    nxt.height,
                )
            )
            i += 2
            continue
        out.append(line)
        i += 1
    return out


def _licence(text: str) -> str:
    match = _CC.search(text)
    if match:
        kind, code, version = match.groups()
        name = "CC0" if kind.lower() == "publicdomain" else "CC " + code.upper()
        return f"{name} {version}"
    if re.search(r"Creative\s+Commons\s+Attribution", text, re.IGNORECASE):
        return "CC BY"
    return ""


def read_pdf(file: Path) -> Paper:
    """:func:`parse_pdf` of a file on disk."""
    return parse_pdf(Path(file).read_bytes(), fallback_title=Path(file).stem)
