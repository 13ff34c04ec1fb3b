"""SciFact's sentence-split corpus: sentence lists kept exactly, one-line errors."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from sciera.corpus import Fields, chunk_with_sentences, get_reader
from sciera.corpus.readers import ScifactSentencesReader
from sciera.errors import InputError, ScieraError

RECORD = {
    "doc_id": 4983,
    "title": "Newborn white matter.",
    "abstract": ["OBJECTIVE: To see.", "We saw it (n = 7).   \n", "It was so."],
    "structured": True,
}


def write(path: Path, *rows: object) -> Path:
    lines = [r if isinstance(r, str) else json.dumps(r) for r in rows]
    path.write_text("\n".join(lines) + "\n", encoding="utf-8")
    return path


def test_sentences_are_kept_exactly(tmp_path: Path) -> None:
    file = write(tmp_path / "corpus_sentences.jsonl", RECORD)
    reader = get_reader("scifact-sentences")
    assert isinstance(reader, ScifactSentencesReader)
    [(no, raw)] = list(reader.records(file))
    doc, spans = reader.parse_with_sentences(file, no, raw)
    assert (doc.doc_id, doc.title) == ("4983", "Newborn white matter.")
    assert doc.text == " ".join(RECORD["abstract"])
    assert dict(doc.metadata) == {"structured": True}
    assert [doc.text[a:b] for a, b in spans] == RECORD["abstract"]
    _, sentences = chunk_with_sentences(doc, 250, spans)
    assert [s.text for s in sentences] == RECORD["abstract"]  # trailing "   \n" kept
    assert [d for _, d in reader.read(file)] == [doc]


@pytest.mark.parametrize(
    ("record", "field", "problem"),
    [
        ({**RECORD, "doc_id": None}, "doc_id", "missing"),
        ({**RECORD, "abstract": "One. Two."}, "abstract", "not a list of sentences"),
        ({**RECORD, "abstract": ["One.", 2]}, "abstract[1]", "not a string"),
        ({k: v for k, v in RECORD.items() if k != "abstract"}, "abstract", "missing"),
        ({**RECORD, "title": "", "abstract": [" "]}, "abstract", "nothing to index"),
        ({**RECORD, "title": 3}, "title", "not a string"),
    ],
)
def test_bad_records_name_file_line_and_field(
    tmp_path: Path, record: dict, field: str, problem: str
) -> None:
    file = write(tmp_path / "c.jsonl", RECORD, record)
    reader = ScifactSentencesReader()
    with pytest.raises(InputError) as err:
        list(reader.read(file))
    assert (err.value.line, err.value.field) == (2, field)
    assert problem in err.value.problem
    assert str(err.value).startswith(f"{file}:2: {field}: ")


def test_title_only_record_and_no_field_overrides(tmp_path: Path) -> None:
    file = write(tmp_path / "c.jsonl", {**RECORD, "abstract": []})
    [(_, doc)] = list(ScifactSentencesReader().read(file))
    assert (doc.text, doc.title) == ("", "Newborn white matter.")
    with pytest.raises(ScieraError, match="fixed fields"):
        get_reader("scifact-sentences", Fields(text="body"))
