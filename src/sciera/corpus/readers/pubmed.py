"""PubMed / MEDLINE baseline XML (``.xml`` or ``.xml.gz``), streamed with iterparse.

Each ``PubmedArticle`` (or ``PubmedBookArticle``) is one record, numbered from 1
in file order. The id is the PMID, the title ``ArticleTitle`` and the text the
``AbstractText`` sections; a labelled section becomes ``"LABEL: text"`` and
sections are joined with newlines. Inline markup (``<i>``, ``<sup>``) keeps its
text, whitespace is collapsed. Journal, year and DOI go into the metadata.
``DeleteCitation`` entries are not applied. Malformed XML stops the file (the
parser cannot continue past it), even with ``skip_bad``.
"""

from __future__ import annotations

import xml.etree.ElementTree as ET
from collections.abc import Iterator
from pathlib import Path
from typing import Any, ClassVar

from sciera.corpus.readers._fields import open_binary
from sciera.corpus.readers.base import Fields, RecordReader, reject_field_overrides
from sciera.errors import InputError
from sciera.types import Document

_ARTICLE_TAGS = frozenset({"PubmedArticle", "PubmedBookArticle"})


def _text(elem: ET.Element | None) -> str:
    if elem is None:
        return ""
    return " ".join("".join(elem.itertext()).split())


def _first(elem: ET.Element, *paths: str) -> ET.Element | None:
    for path in paths:
        found = elem.find(path)
        if found is not None:
            return found
    return None


class PubmedReader(RecordReader):
    name: ClassVar[str] = "pubmed"
    id_field = "PMID"

    def __init__(self, fields: Fields | None = None) -> None:
        reject_field_overrides(self.name, fields)

    def records(self, file: Path) -> Iterator[tuple[int, Any]]:
        count = 0
        with open_binary(file) as handle:
            events = ET.iterparse(handle, events=("start", "end"))
            root: ET.Element | None = None
            try:
                for event, elem in events:
                    if root is None:
                        root = elem
                    if event == "end" and elem.tag in _ARTICLE_TAGS:
                        count += 1
                        yield count, elem
                        root.clear()  # drop parsed articles: memory stays flat
            except ET.ParseError as exc:
                line, column = exc.position
                raise InputError(
                    file, count + 1, "xml", f"malformed XML at line {line}, column {column}: {exc}"
                ) from exc

    def parse(self, file: Path, record_no: int, raw: Any) -> Document:
        article: ET.Element = raw
        pmid = _text(_first(article, "MedlineCitation/PMID", "BookDocument/PMID"))
        if not pmid:
            raise InputError(file, record_no, "PMID", "missing")
        title = _text(
            _first(
                article,
                "MedlineCitation/Article/ArticleTitle",
                "BookDocument/ArticleTitle",
                "BookDocument/Book/BookTitle",
            )
        )
        sections = article.findall("MedlineCitation/Article/Abstract/AbstractText")
        sections += article.findall("BookDocument/Abstract/AbstractText")
        parts = []
        for section in sections:
            body = _text(section)
            if not body:
                continue
            label = (section.get("Label") or "").strip()
            parts.append(f"{label}: {body}" if label else body)
        if not parts:
            raise InputError(file, record_no, "AbstractText", "missing")
        return Document(
            doc_id=pmid, title=title, text="\n".join(parts), metadata=self._metadata(article)
        )

    def _metadata(self, article: ET.Element) -> dict[str, str]:
        meta: dict[str, str] = {}
        journal = _text(article.find("MedlineCitation/Article/Journal/Title"))
        if journal:
            meta["journal"] = journal
        pub_date = article.find("MedlineCitation/Article/Journal/JournalIssue/PubDate")
        if pub_date is not None:
            year = _text(pub_date.find("Year")) or _text(pub_date.find("MedlineDate"))[:4]
            if year:
                meta["year"] = year
        for article_id in article.findall("PubmedData/ArticleIdList/ArticleId"):
            if article_id.get("IdType") == "doi" and _text(article_id):
                meta["doi"] = _text(article_id)
                break
        return meta
