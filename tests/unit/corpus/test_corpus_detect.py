"""Format detection and the reader registry."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from sciera.corpus import READERS, Reader, detect_format, get_reader
from sciera.errors import ScieraError


@pytest.mark.parametrize(
    ("name", "expected"),
    [
        ("a.jsonl", "jsonl"),
        ("a.jsonl.gz", "jsonl"),
        ("a.json", "openalex"),
        ("a.csv", "csv"),
        ("a.tsv", "csv"),
        ("pubmed24n0001.xml", "pubmed"),
        ("pubmed24n0001.xml.gz", "pubmed"),
        ("dev.docs", "nfcorpus"),
    ],
)
def test_detect_by_suffix(tmp_path: Path, name: str, expected: str) -> None:
    assert detect_format(tmp_path / name) == expected


def test_detect_beir_folder_and_openalex_lines(tmp_path: Path) -> None:
    (tmp_path / "corpus.jsonl").write_text('{"_id": "1", "text": "x"}\n')
    assert detect_format(tmp_path) == "beir"
    works = tmp_path / "works.jsonl"
    works.write_text(json.dumps({"id": "W1", "abstract_inverted_index": {"a": [0]}}) + "\n")
    assert detect_format(works) == "openalex"
    split = tmp_path / "corpus_sentences.jsonl"
    split.write_text(json.dumps({"doc_id": 4, "title": "T", "abstract": ["A.", "B."]}) + "\n")
    assert detect_format(split) == "scifact-sentences"
    plain = tmp_path / "plain.jsonl"  # an "abstract" string is an ordinary JSON-lines field
    plain.write_text(json.dumps({"doc_id": 4, "abstract": "A. B."}) + "\n")
    assert detect_format(plain) == "jsonl"


def test_a_scifact_release_folder_is_read_with_its_sentences(tmp_path: Path) -> None:
    # SciFact's own data folder: corpus.jsonl holds abstracts as sentence lists, not BEIR
    record = {"doc_id": 4, "title": "T", "abstract": ["A b.", "C (d.) e."], "structured": False}
    (tmp_path / "corpus.jsonl").write_text(json.dumps(record) + "\n")
    assert detect_format(tmp_path) == "scifact-sentences"
    reader = get_reader("scifact-sentences")
    assert reader.source_file(tmp_path) == tmp_path / "corpus.jsonl"
    doc, spans = reader.parse_with_sentences(tmp_path / "corpus.jsonl", 1, json.dumps(record))
    assert [doc.text[a:b] for a, b in spans] == record["abstract"]


def test_detect_errors(tmp_path: Path) -> None:
    with pytest.raises(ScieraError, match=r"without corpus\.jsonl"):
        detect_format(tmp_path)
    with pytest.raises(ScieraError, match="pass --format"):
        detect_format(tmp_path / "notes.txt")


def test_registry_is_explicit() -> None:
    assert set(READERS) == {
        "beir",
        "jsonl",
        "csv",
        "pubmed",
        "openalex",
        "scifact-sentences",
        "jats",
        "pdf",
        "pubmedqa",
        "nfcorpus",
    }
    for name, cls in READERS.items():
        assert cls.name == name
        reader = get_reader(name)
        assert reader.name == name
        assert isinstance(reader, Reader)
    with pytest.raises(ScieraError, match="unknown format 'xml'"):
        get_reader("xml")
