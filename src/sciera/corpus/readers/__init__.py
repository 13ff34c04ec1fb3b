"""Corpus readers: an explicit registry of format name -> reader class.

``detect_format(path)`` picks a name from the path; ``get_reader(name, fields)``
builds the reader. See :mod:`sciera.corpus.readers.base` for the protocol.
"""

from __future__ import annotations

import json
import zlib
from pathlib import Path

from sciera.corpus.fulltext.jats import looks_like_jats
from sciera.corpus.readers._fields import data_suffix, open_binary
from sciera.corpus.readers.base import (
    Fields,
    ParsedRecord,
    Reader,
    RecordReader,
    SentenceSpans,
)
from sciera.corpus.readers.beir import (
    BeirReader,
    load_beir_qrels,
    load_beir_queries,
    load_qrels,
    relevant_docs,
)
from sciera.corpus.readers.csvfile import CsvReader
from sciera.corpus.readers.jats import JatsReader
from sciera.corpus.readers.jsonl import JsonlReader, iter_lines
from sciera.corpus.readers.nfcorpus import NfcorpusReader
from sciera.corpus.readers.openalex import OpenAlexReader
from sciera.corpus.readers.pdf import PdfReader
from sciera.corpus.readers.pubmed import PubmedReader
from sciera.corpus.readers.pubmedqa import PubmedqaReader
from sciera.corpus.readers.scifact_sentences import (
    ScifactSentencesReader,
    looks_like_scifact_sentences,
)
from sciera.errors import InputError, ScieraError

READERS: dict[str, type[RecordReader]] = {
    "beir": BeirReader,
    "jsonl": JsonlReader,
    "csv": CsvReader,
    "pubmed": PubmedReader,
    "openalex": OpenAlexReader,
    "scifact-sentences": ScifactSentencesReader,
    "jats": JatsReader,
    "pdf": PdfReader,
    "pubmedqa": PubmedqaReader,
    "nfcorpus": NfcorpusReader,
}

_BY_SUFFIX = {
    ".xml": "pubmed",
    ".nxml": "jats",
    ".pdf": "pdf",
    ".json": "openalex",
    ".csv": "csv",
    ".tsv": "csv",
    ".jsonl": "jsonl",
    ".ndjson": "jsonl",
    ".docs": "nfcorpus",
}


def detect_format(path: Path | str) -> str:
    """Format name for ``path``.

    A folder holding corpus.jsonl is ``beir``, or ``scifact-sentences`` when that file's first
    record has SciFact's own shape (SciFact's data release: abstracts as sentence lists). A
    file is told by its content first: a
    ``%PDF-`` header is ``pdf``, a JATS
    ``<article>`` (root element or DOCTYPE) is ``jats`` whatever its name, a
    ``PubmedArticleSet`` is ``pubmed``. Otherwise by its name: ``.pdf`` is ``pdf``,
    ``.nxml[.gz]`` is ``jats``,
    ``.xml[.gz]`` is ``pubmed``; ``.json[.gz]`` is ``openalex``; ``.csv``/``.tsv`` is
    ``csv``; ``.jsonl`` / ``.ndjson`` is ``jsonl``, or ``openalex`` when its first record has an
    ``abstract_inverted_index``, or ``scifact-sentences`` when its first record has a
    ``doc_id`` and an ``abstract`` that is a list of sentences. A ``.json`` object whose
    first entry holds ``CONTEXTS`` is ``pubmedqa`` (PubMedQA's PQA files); ``.docs`` is
    ``nfcorpus`` (NFCorpus's own ``ID<TAB>text`` lines).
    """
    path = Path(path)
    if path.is_dir():
        if (path / "corpus.jsonl").is_file():
            first = _first_record(path / "corpus.jsonl")
            return "scifact-sentences" if looks_like_scifact_sentences(first) else "beir"
        raise ScieraError(f"{path}: cannot tell the format of a folder without corpus.jsonl")
    sniffed = sniff_format(path) if path.is_file() else None
    name = sniffed or _BY_SUFFIX.get(data_suffix(path))
    if name is None:
        raise ScieraError(
            f"{path}: cannot tell the format from the file name; pass --format "
            f"(one of {', '.join(READERS)})"
        )
    if name == "openalex" and data_suffix(path) == ".json" and _looks_like_pqa(path):
        return "pubmedqa"
    if name == "jsonl" and path.is_file():
        first = _first_record(path)
        if isinstance(first, dict) and "abstract_inverted_index" in first:
            return "openalex"
        if looks_like_scifact_sentences(first):
            return "scifact-sentences"
    return name


def sniff_format(file: Path) -> str | None:
    """The format a file's first bytes show (PDF, JATS or PubMed XML), or None."""
    try:
        with open_binary(file) as handle:
            head = handle.read(4096)
    except (OSError, EOFError, zlib.error, InputError):  # the reader reports the damage
        return None
    if head.lstrip()[:5] == b"%PDF-":
        return "pdf"
    if looks_like_jats(head):
        return "jats"
    if b"<PubmedArticleSet" in head or b"<!DOCTYPE PubmedArticleSet" in head:
        return "pubmed"
    return None


def _looks_like_pqa(file: Path) -> bool:
    """Whether a JSON file opens as PubMedQA's ``{pmid: {..., "CONTEXTS": ...}}`` does (its
    first 64 KB: a PQA entry is a few KB)."""
    try:
        with open_binary(file) as handle:
            head = handle.read(65536)
    except (OSError, EOFError, zlib.error, InputError):  # the reader reports the damage
        return False
    start = head.lstrip()[:1]
    return start == b"{" and b'"CONTEXTS"' in head and b'"abstract_inverted_index"' not in head


def _first_record(file: Path) -> object:
    """The first line of a JSON-lines file, parsed (None when it is not JSON)."""
    for _, line in iter_lines(file):
        try:
            return json.loads(line)
        except (ValueError, RecursionError):  # bad JSON or UTF-8, too deep, too many digits
            return None
    return None


def get_reader(name: str, fields: Fields | None = None) -> RecordReader:
    """The reader registered under ``name``, configured with field overrides."""
    try:
        cls = READERS[name]
    except KeyError:
        raise ScieraError(f"unknown format {name!r}; choose one of {', '.join(READERS)}") from None
    return cls(fields)


__all__ = [
    "READERS",
    "BeirReader",
    "CsvReader",
    "Fields",
    "JatsReader",
    "JsonlReader",
    "OpenAlexReader",
    "ParsedRecord",
    "PdfReader",
    "PubmedReader",
    "PubmedqaReader",
    "Reader",
    "RecordReader",
    "ScifactSentencesReader",
    "SentenceSpans",
    "detect_format",
    "get_reader",
    "load_beir_qrels",
    "load_beir_queries",
    "load_qrels",
    "relevant_docs",
    "sniff_format",
]
