"""Hypothesis strategies for corpus files: arbitrary bytes, and records that are almost right.

Each format gets a strategy of *good* records (what its reader must turn into a document)
and of *bad* ones (wrong types, missing or empty fields, invalid UTF-8, lone surrogates,
deep nesting, numbers too long to convert, NUL bytes, huge fields), and a function that
writes a list of records as that format's file. The fuzz tests in
``test_corpus_readers_fuzz.py`` use them.
"""

from __future__ import annotations

import csv
import io
import json
from collections.abc import Callable
from pathlib import Path
from typing import Any
from xml.sax.saxutils import escape, quoteattr

from hypothesis import strategies as st

# Text that still reads as words (the chunker needs a non-space character), with the
# characters that break naive code: NUL, newlines, quotes, tabs, combining marks, RTL,
# emoji and characters outside the BMP.
_AWKWARD = "\x00\n\r\t\"',;<>&#\\\u0301\u202e\u00a0\u2028\U0001f600\U00010348"
_ALPHABET = st.characters(codec="utf-8") | st.sampled_from(_AWKWARD)
words = st.text(_ALPHABET, min_size=1, max_size=40).filter(lambda s: s.strip() != "")
# XML 1.0 forbids most control characters and NUL; pubmed text uses the legal ones only
_XML_ALPHABET = st.characters(
    codec="utf-8", exclude_categories=("Cs", "Cc"), exclude_characters="\ufffe\uffff"
) | st.sampled_from("\n\t\"'<>&#\u0301\u202e\U0001f600")
xml_words = st.text(_XML_ALPHABET, min_size=1, max_size=40).filter(lambda s: s.strip() != "")

ids = st.text(
    st.characters(codec="utf-8", exclude_categories=("Cs",)), min_size=1, max_size=12
).filter(lambda s: s.strip() != "")

# JSON values for fields that should be something else: every JSON type, nested
json_values = st.recursive(
    st.none()
    | st.booleans()
    | st.integers()
    | st.floats(allow_nan=True, allow_infinity=True)
    | st.text(_ALPHABET, max_size=20),
    lambda children: (
        st.lists(children, max_size=3) | st.dictionaries(st.text(max_size=5), children, max_size=3)
    ),
    max_leaves=8,
)
wrong_type = json_values.filter(lambda v: not isinstance(v, str))


def _line(record: Any) -> bytes:
    return json.dumps(record).encode() if not isinstance(record, bytes) else record


# Raw JSON lines that are never one good record: each is bad for a reason of its own.
bad_json_lines = st.one_of(
    st.just(b"\xff\xfe not utf-8"),
    st.binary(min_size=1, max_size=40).map(lambda b: b'{"id": "x\xc3\x28' + b.replace(b"\n", b"")),
    st.integers(200, 3000).map(lambda n: b"[" * n + b"]" * n),  # nested deeper than json.loads
    st.integers(200, 3000).map(lambda n: b'{"a":' * n + b"1" + b"}" * n),
    st.integers(4301, 6000).map(lambda n: b'{"id": ' + b"7" * n + b"}"),  # too many digits
    st.just(b'{"id": "a", "text": "x\\ud800y"}'),  # a lone surrogate: valid JSON, not Unicode
    st.just(b'{"id": "a", "text": "ok", "meta": {"k": ["\\udfff"]}}'),
    st.just(b"{truncated"),
    st.just(b"\x00\x00\x00"),
    json_values.filter(lambda v: not isinstance(v, dict)).map(_line),
)


def _record_strategy(
    id_key: str, title_key: str, text_key: str, text: st.SearchStrategy[Any]
) -> st.SearchStrategy[dict[str, Any]]:
    return st.fixed_dictionaries(
        {id_key: ids, text_key: text},
        optional={
            title_key: st.text(_ALPHABET, max_size=30),
            "extra": json_values,
            "year": st.integers(1900, 2100),
        },
    )


def good_records(fmt: str) -> st.SearchStrategy[dict[str, Any]]:
    """Records the reader of ``fmt`` must accept (ids may repeat: the test makes them unique)."""
    text = st.lists(words, min_size=1, max_size=8).map(" ".join)
    if fmt in ("jsonl", "csv"):
        return _record_strategy("id", "title", "text", text)
    if fmt == "beir":
        return _record_strategy("_id", "title", "text", text) | _record_strategy(
            "_id", "title", "text", text
        ).flatmap(
            lambda r: st.dictionaries(st.text(max_size=5), json_values, max_size=3).map(
                lambda m: {**r, "metadata": m}
            )
        )
    if fmt == "scifact-sentences":
        return st.fixed_dictionaries(
            {"doc_id": ids | st.integers(0, 10**12), "abstract": st.lists(words, min_size=1)},
            optional={"title": st.text(_ALPHABET, max_size=30), "structured": st.booleans()},
        )
    if fmt == "openalex":
        return st.fixed_dictionaries(
            {
                "id": ids.map(lambda s: "https://openalex.org/W" + s),
                "abstract_inverted_index": st.dictionaries(
                    words, st.lists(st.integers(0, 500), min_size=1, max_size=3), min_size=1
                ),
            },
            optional={"title": st.text(_ALPHABET, max_size=30), "cited_by_count": st.integers()},
        )
    if fmt == "pubmed":
        return st.fixed_dictionaries(
            {
                "PMID": ids.filter(lambda s: all(c not in s for c in "\x00\r")).map(
                    lambda s: "".join(c for c in s if c.isprintable()) or "1"
                ),
                "abstract": st.lists(xml_words, min_size=1, max_size=3),
            },
            optional={"title": xml_words, "label": xml_words},
        ).filter(lambda r: r["PMID"].strip() != "")
    raise ValueError(fmt)


def bad_records(fmt: str) -> st.SearchStrategy[Any]:
    """Records (dicts, or raw bytes for a line) the reader of ``fmt`` must reject."""
    if fmt == "pubmed":
        return st.one_of(
            st.fixed_dictionaries({"abstract": st.lists(xml_words, min_size=1, max_size=2)}),
            st.fixed_dictionaries({"PMID": st.just("9"), "abstract": st.just([])}),
        )
    if fmt == "csv":
        return st.one_of(
            st.fixed_dictionaries({"id": st.just(""), "text": words}),
            st.fixed_dictionaries({"id": ids, "text": st.sampled_from(["", "  ", "\n"])}),
            st.fixed_dictionaries({"id": ids, "text": st.just(b"caf\xe9 latin-1")}),
            st.just(["only-one-column"]),
        )
    if fmt == "openalex":
        fields = {"id": ids, "abstract_inverted_index": {"w": [0]}}
        broken = st.one_of(
            st.fixed_dictionaries({"id": ids}),
            st.fixed_dictionaries(
                {
                    "id": wrong_type.filter(lambda v: not _id_like(v)),
                    "abstract_inverted_index": st.just({"w": [0]}),
                }
            ),
            st.fixed_dictionaries(
                {"id": ids, "abstract_inverted_index": json_values.filter(_not_index)}
            ),
            st.fixed_dictionaries(
                {"id": ids, "abstract_inverted_index": st.just({"w": [0]}), "title": wrong_type}
            ).filter(lambda r: r["title"] not in (None, False, 0, 0.0, [], {}, "")),
            st.just({"id": "https://openalex.org/", "abstract_inverted_index": {"w": [0]}}),
            st.just({**fields, "id": "  "}),
        )
        return broken | bad_json_lines
    keys = {
        "jsonl": ("id", "title", "text"),
        "beir": ("_id", "title", "text"),
        "scifact-sentences": ("doc_id", "title", "abstract"),
    }[fmt]
    id_key, title_key, text_key = keys
    good_text: Any = ["A sentence."] if fmt == "scifact-sentences" else "Some text."
    wrong_text = (
        json_values.filter(
            lambda v: not isinstance(v, list) or not all(isinstance(s, str) for s in v)
        ).filter(lambda v: v is not None and v != [])
        if fmt == "scifact-sentences"
        else wrong_type.filter(lambda v: v is not None)
    )
    broken = st.one_of(
        st.fixed_dictionaries({text_key: st.just(good_text)}),  # no id
        st.fixed_dictionaries(
            {id_key: wrong_type.filter(lambda v: not _id_like(v)), text_key: st.just(good_text)}
        ),
        st.fixed_dictionaries(
            {id_key: st.sampled_from(["", " ", "\t\n"]), text_key: st.just(good_text)}
        ),
        st.fixed_dictionaries({id_key: ids, text_key: wrong_text}),
        st.fixed_dictionaries(
            {
                id_key: ids,
                title_key: wrong_type.filter(lambda v: v is not None),
                text_key: st.just(good_text),
            }
        ),
    )
    if fmt == "beir":
        broken |= st.fixed_dictionaries(
            {
                "_id": ids,
                "text": st.just("x"),
                "metadata": wrong_type.filter(lambda v: not isinstance(v, dict) and v is not None),
            }
        )
    return broken | bad_json_lines


def _id_like(value: Any) -> bool:
    return value is None or (isinstance(value, int) and not isinstance(value, bool))


def _not_index(value: Any) -> bool:
    from sciera.corpus.readers.openalex import _valid_index

    return value is not None and (not _valid_index(value) or not any(value.values()))


# ---- writing files -------------------------------------------------------------------


def write_jsonl(path: Path, records: list[Any]) -> Path:
    path.write_bytes(b"".join(_line(r) + b"\n" for r in records))
    return path


def write_openalex_json(path: Path, records: list[Any]) -> Path:
    """A ``.json`` array of works (raw byte lines cannot be array items: they are skipped)."""
    path.write_text(json.dumps([r for r in records if not isinstance(r, bytes)]), "utf-8")
    return path


def write_csv(path: Path, records: list[Any], delimiter: str = ",") -> Path:
    """A header ``id,title,text,extra`` and one row per record; bytes values are written raw."""
    columns = ["id", "title", "text", "extra"]
    out = io.BytesIO()
    out.write(delimiter.join(columns).encode() + b"\r\n")
    for record in records:
        # a list is a row with the wrong number of columns
        row = record if isinstance(record, list) else [record.get(c, "") for c in columns]
        text_row: list[str] = []
        raw: dict[int, bytes] = {}
        for i, value in enumerate(row):
            if isinstance(value, bytes):
                raw[i] = value
                text_row.append(f"\x01RAW{i}\x01")
            else:
                text_row.append(value if isinstance(value, str) else json.dumps(value))
        buffer = io.StringIO()
        csv.writer(buffer, delimiter=delimiter, lineterminator="\r\n").writerow(text_row)
        line = buffer.getvalue().encode("utf-8", "surrogatepass")
        for i, value in raw.items():
            line = line.replace(f"\x01RAW{i}\x01".encode(), value)
        out.write(line)
    path.write_bytes(out.getvalue())
    return path


def pubmed_article(record: dict[str, Any]) -> str:
    pmid = f"<PMID>{escape(record['PMID'])}</PMID>" if "PMID" in record else ""
    title = f"<ArticleTitle>{escape(record.get('title', ''))}</ArticleTitle>"
    label = f" Label={quoteattr(record['label'])}" if "label" in record else ""
    sections = "".join(
        f"<AbstractText{label}>{escape(body)}</AbstractText>" for body in record["abstract"]
    )
    return (
        f"<PubmedArticle><MedlineCitation>{pmid}<Article>{title}"
        f"<Abstract>{sections}</Abstract></Article></MedlineCitation></PubmedArticle>"
    )


def write_pubmed(path: Path, records: list[Any]) -> Path:
    body = "".join(pubmed_article(r) for r in records)
    path.write_text(f'<?xml version="1.0"?>\n<PubmedArticleSet>{body}</PubmedArticleSet>\n')
    return path


# format -> (file name, writer)
WRITERS: dict[str, tuple[str, Callable[[Path, list[Any]], Path]]] = {
    "jsonl": ("docs.jsonl", write_jsonl),
    "beir": ("corpus.jsonl", write_jsonl),
    "scifact-sentences": ("corpus_sentences.jsonl", write_jsonl),
    "openalex": ("works.jsonl", write_jsonl),
    "csv": ("docs.csv", write_csv),
    "pubmed": ("docs.xml", write_pubmed),
}

# format -> the key holding its document id (the pubmed PMID is unique per record)
ID_KEYS = {
    "jsonl": "id",
    "beir": "_id",
    "scifact-sentences": "doc_id",
    "openalex": "id",
    "csv": "id",
    "pubmed": "PMID",
}

# the file names (one per suffix the format is read from) that arbitrary bytes go to
BYTE_FILES = {
    "jsonl": ["docs.jsonl", "docs.jsonl.gz"],
    "beir": ["corpus.jsonl"],
    "scifact-sentences": ["corpus.jsonl"],
    "openalex": ["works.json", "works.jsonl"],
    "csv": ["docs.csv", "docs.tsv"],
    "pubmed": ["docs.xml", "docs.xml.gz"],
}
