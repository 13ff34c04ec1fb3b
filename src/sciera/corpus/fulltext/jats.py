"""JATS XML (PMC Open Access ``.nxml``, eLife, PLOS, BMC) as a :class:`Paper`.

Front matter gives the metadata (title, authors, year, journal, DOI, PMID, PMCID,
licence). Each ``<abstract>`` becomes a section (``Abstract``, or its own title such as
"eLife digest" or "Author Summary"), then the body's ``<sec>`` tree (paragraphs directly
in ``<body>`` go to a section titled "Main text"), then back matter (acknowledgements,
appendices, back sections). Figures, tables and supplementary files give caption blocks
(label + caption) and tables give a table block, one line per row; formulas set apart
from the text (``<disp-formula>``) are left out, inline markup keeps its text.
``<ref-list>`` entries become :class:`Reference` s. A file with no body and no abstract
text raises :class:`JatsError`.
"""

from __future__ import annotations

import re
import xml.etree.ElementTree as ET
from collections.abc import Iterator

from sciera.corpus.fulltext.model import Block, Paper, PaperMeta, Reference, Section

_XLINK_HREF = "{http://www.w3.org/1999/xlink}href"
_FLOATS = frozenset({"fig", "table-wrap", "supplementary-material", "fig-group"})
_SKIP_INLINE = frozenset({"disp-formula", "fn", "alternatives"}) | _FLOATS
_PARAGRAPH_LIKE = frozenset({"p", "disp-quote", "speech", "statement", "verse-group"})


class JatsError(ValueError):
    """A JATS file that cannot be read: ``field`` names the element, ``problem`` what is
    wrong (the reader turns it into a one-line InputError)."""

    def __init__(self, field: str, problem: str) -> None:
        self.field, self.problem = field, problem
        super().__init__(f"{field}: {problem}")


def _norm(text: str) -> str:
    return " ".join(text.split())


def _local(tag: object) -> str:
    if not isinstance(tag, str):  # comments and processing instructions
        return ""
    return tag.rpartition("}")[2]


def _text(elem: ET.Element | None, skip: frozenset[str] = frozenset()) -> str:
    """The element's text with inline markup kept and ``skip`` elements left out."""
    if elem is None:
        return ""
    parts: list[str] = []

    def walk(e: ET.Element) -> None:
        if e.text:
            parts.append(e.text)
        for child in e:
            if _local(child.tag) not in skip:
                walk(child)
            if child.tail:
                parts.append(child.tail)

    walk(elem)
    return _norm("".join(parts))


def looks_like_jats(head: bytes) -> bool:
    """Whether the first bytes of a file are a JATS/NLM article (DOCTYPE or root)."""
    text = head.decode("utf-8", "ignore")
    if re.search(r"<!DOCTYPE\s+article\b", text):
        return True
    body = re.sub(r"<\?.*?\?>|<!--.*?-->|<!DOCTYPE[^>]*>", "", text, flags=re.DOTALL)
    return re.match(r"\s*<article[\s>]", body) is not None


def parse_jats(data: bytes) -> Paper:
    """The paper in one JATS file's bytes; raises :class:`JatsError` on unusable input."""
    if not data.strip():
        raise JatsError("file", "empty file")
    try:
        root = ET.fromstring(data)
    except ET.ParseError as exc:
        line, column = exc.position
        raise JatsError("xml", f"malformed XML at line {line}, column {column}") from exc
    if _local(root.tag) != "article":
        raise JatsError("article", f"root element is <{_local(root.tag)}>, not a JATS <article>")
    try:
        meta = _meta(root)
        sections = [*_abstracts(root), *_body(root), *_back(root)]
        references = tuple(_references(root))
    except RecursionError:
        raise JatsError("xml", "elements nested too deeply to read") from None
    if not any(s.blocks for s in sections):
        raise JatsError("body", "no body text and no abstract")
    return Paper(meta=meta, sections=tuple(sections), references=references, source_format="jats")


# -- front matter ----------------------------------------------------------------------
def _meta(root: ET.Element) -> PaperMeta:
    article_meta = root.find("front/article-meta")
    journal_meta = root.find("front/journal-meta")
    if article_meta is None:
        raise JatsError("article-meta", "missing (no <front><article-meta>)")
    ids = {(e.get("pub-id-type") or ""): _text(e) for e in article_meta.findall("article-id")}
    pmcid = ids.get("pmcid") or ids.get("pmc") or ""
    if pmcid and not pmcid.upper().startswith("PMC"):
        pmcid = f"PMC{pmcid}"
    journal = ""
    if journal_meta is not None:
        journal = _text(journal_meta.find("journal-title-group/journal-title")) or _text(
            journal_meta.find("journal-title")
        )
    licence, licence_url = _licence(article_meta)
    return PaperMeta(
        title=_text(article_meta.find("title-group/article-title"), frozenset({"xref", "fn"})),
        authors=tuple(_authors(article_meta)),
        year=_year(article_meta),
        journal=journal,
        doi=ids.get("doi", ""),
        pmid=ids.get("pmid", ""),
        pmcid=pmcid,
        licence=licence,
        licence_url=licence_url,
    )


def _authors(article_meta: ET.Element) -> Iterator[str]:
    for contrib in article_meta.iter("contrib"):
        if contrib.get("contrib-type", "author") != "author":
            continue
        name = contrib.find("name")
        if name is not None:
            given, surname = _text(name.find("given-names")), _text(name.find("surname"))
            full = f"{given} {surname}".strip()
        else:
            full = _text(contrib.find("collab"), frozenset({"contrib-group", "xref"}))
        if full:
            yield full


def _year(article_meta: ET.Element) -> str:
    dates = article_meta.findall("pub-date")
    order = ("epub", "pub", "ppub", "collection", "")
    for wanted in order:
        for d in dates:
            kind = d.get("pub-type") or d.get("date-type") or ""
            if kind == wanted or (not wanted and kind not in order):
                year = _text(d.find("year"))
                if year:
                    return year
    return ""


_LICENCE_URL = re.compile(
    r"creativecommons\.org/(licenses|publicdomain)/([a-z-]+)/(\d\.\d)", re.IGNORECASE
)


def _licence(article_meta: ET.Element) -> tuple[str, str]:
    """``("CC BY 4.0", url)`` from ``<license>``: its link, else its words."""
    lic = article_meta.find("permissions/license")
    if lic is None:
        return "", ""
    url = lic.get(_XLINK_HREF) or ""
    words = _text(lic)
    if not url:
        for link in lic.iter("ext-link"):
            url = link.get(_XLINK_HREF) or _text(link)
            break
    if not url:
        match = _LICENCE_URL.search(words)
        url = match.group(0) if match else ""
    match = _LICENCE_URL.search(url)
    if match:
        kind, code, version = match.groups()
        name = "CC0" if kind.lower() == "publicdomain" else "CC " + code.upper()
        return f"{name} {version}", url
    if re.search(r"Creative Commons Attribution", words, re.IGNORECASE):
        return "CC BY", url
    if re.search(r"free of all copyright|public domain", words, re.IGNORECASE):
        return "public domain", url
    return ("other", url) if words or url else ("", "")


# -- sections --------------------------------------------------------------------------
def _abstracts(root: ET.Element) -> Iterator[Section]:
    article_meta = root.find("front/article-meta")
    if article_meta is None:
        return
    for abstract in article_meta.findall("abstract") + article_meta.findall("trans-abstract"):
        if abstract.get("abstract-type") in {"teaser", "short", "web-summary"}:
            continue
        title = _text(abstract.find("title")) or "Abstract"
        yield from _section(abstract, (title,), sec_type="abstract")


def _body(root: ET.Element) -> Iterator[Section]:
    body = root.find("body")
    if body is None:
        return
    yield from _section(body, ("Main text",), top=True)
    floats = root.find("floats-group")
    if floats is not None:
        yield from _section(floats, ("Figures and tables",), top=True)


def _back(root: ET.Element) -> Iterator[Section]:
    back = root.find("back")
    if back is None:
        return
    for child in back:
        tag = _local(child.tag)
        if tag == "ack":
            title = _text(child.find("title")) or "Acknowledgements"
            yield from _section(child, (title,))
        elif tag == "sec":
            yield from _section(child, (_text(child.find("title")) or "Back matter",))
        elif tag == "app-group":
            for app in child.findall("app"):
                title = _text(app.find("title")) or _text(app.find("label")) or "Appendix"
                yield from _section(app, (title,))
        elif tag == "app":
            yield from _section(child, (_text(child.find("title")) or "Appendix",))


def _section(
    elem: ET.Element, path: tuple[str, ...], *, top: bool = False, sec_type: str = ""
) -> Iterator[Section]:
    """``elem``'s own blocks as one section at ``path``, then its subsections in order.

    With ``top`` (the body), a ``<sec>`` child starts a top-level section of its own
    rather than a subsection of ``path``.
    """
    blocks: list[Block] = []

    def flush() -> Iterator[Section]:
        nonlocal blocks
        if blocks:
            yield Section(path, tuple(blocks), sec_type or elem.get("sec-type", ""))
            blocks = []

    for child in elem:
        tag = _local(child.tag)
        if tag in {"title", "label", "sec-meta", "object-id", "ref-list", "fn-group"}:
            continue
        if tag == "sec":
            yield from flush()
            title = _text(child.find("title"), frozenset({"xref"})) or _text(child.find("label"))
            sub = (title or "Untitled",) if top else (*path, title or "Untitled")
            yield from _section(child, sub)
            continue
        blocks.extend(_blocks(child))
    yield from flush()


def _blocks(elem: ET.Element) -> Iterator[Block]:
    tag = _local(elem.tag)
    if tag in _PARAGRAPH_LIKE:
        text = _text(elem, _SKIP_INLINE | frozenset({"list", "table-wrap"}))
        if text:
            yield Block("paragraph", text)
        for nested in _nested_floats(elem):  # floats and lists in the paragraph, after it
            yield from _blocks(nested)
    elif tag == "list":
        for item in elem.findall("list-item"):
            for child in item:
                yield from _blocks(child)
            if not len(item) and _text(item):
                yield Block("paragraph", _text(item))
    elif tag in {"fig", "supplementary-material"}:
        label = _text(elem.find("label"))
        caption = _text(elem.find("caption"), _SKIP_INLINE)
        text = " ".join(x for x in (_caption_label(label), caption) if x)
        if caption:
            yield Block("caption", text, label)
    elif tag == "fig-group":
        for fig in elem.findall("fig"):
            yield from _blocks(fig)
    elif tag == "table-wrap":
        label = _text(elem.find("label"))
        caption = _text(elem.find("caption"), _SKIP_INLINE)
        if caption or label:
            yield Block(
                "caption", " ".join(x for x in (_caption_label(label), caption) if x), label
            )
        rows = list(_table_rows(elem))
        if rows:
            yield Block("table", "\n".join(rows), label)
        foot = _text(elem.find("table-wrap-foot"), _SKIP_INLINE)
        if foot:
            yield Block("caption", foot, label)
    elif tag in {"boxed-text", "disp-quote", "glossary", "def-list"}:
        for child in elem:
            if _local(child.tag) not in {"title", "label", "caption", "object-id"}:
                yield from _blocks(child)
    elif tag == "def-item":
        text = _text(elem)
        if text:
            yield Block("paragraph", text)


def _nested_floats(elem: ET.Element) -> Iterator[ET.Element]:
    """Figures, tables and lists inside a paragraph (not those inside one of them)."""
    for child in elem:
        if _local(child.tag) in _FLOATS | {"list"}:
            yield child
        else:
            yield from _nested_floats(child)


def _caption_label(label: str) -> str:
    return label if not label or label.endswith((".", ":")) else f"{label}."


def _table_rows(table_wrap: ET.Element) -> Iterator[str]:
    for table in table_wrap.iter("table"):
        for row in table.iter("tr"):
            cells = [_text(c, _SKIP_INLINE) for c in row if _local(c.tag) in {"td", "th"}]
            if any(cells):
                yield " | ".join(cells)


# -- references ------------------------------------------------------------------------
def _spaced(elem: ET.Element) -> str:
    """Text of an element whose parts are fields with no spaces between them
    (``<surname>Avery</surname><given-names>SV</given-names>``)."""
    text = " ".join(t.strip() for t in elem.itertext() if t.strip())
    return re.sub(r"\s+([,.;:)\]])", r"\1", re.sub(r"([(\[])\s+", r"\1", text))


_CITATIONS = ("element-citation", "mixed-citation", "nlm-citation", "citation")


def _references(root: ET.Element) -> Iterator[Reference]:
    for n, ref in enumerate(root.iter("ref"), start=1):
        cite = next((c for tag in _CITATIONS for c in ref.iter(tag)), None)
        if cite is None:
            continue
        ids = {(e.get("pub-id-type") or ""): _text(e) for e in cite.iter("pub-id")}
        doi = ids.get("doi", "")
        if not doi:
            for link in cite.iter("ext-link"):
                match = re.search(r"10\.\d{4,9}/\S+", _text(link))
                if match:
                    doi = match.group(0)
                    break
        authors = []
        for name in cite.iter("name"):
            surname, given = _text(name.find("surname")), _text(name.find("given-names"))
            authors.append(f"{surname} {given}".strip())
        for collab in cite.iter("collab"):
            authors.append(_text(collab))
        yield Reference(
            label=_text(ref.find("label")) or str(n),
            text=_spaced(cite),
            title=_text(cite.find("article-title")) or _text(cite.find("chapter-title")),
            authors=tuple(a for a in authors if a),
            year=_text(cite.find("year"))[:4],
            journal=_text(cite.find("source")),
            doi=doi,
            pmid=ids.get("pmid", ""),
        )
