"""OpenAlex works reader."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from sciera.corpus.readers import OpenAlexReader
from sciera.corpus.readers.openalex import rebuild_abstract
from sciera.errors import InputError

WORK = {
    "id": "https://openalex.org/W2741809807",
    "title": "The state of OA",
    "display_name": "The state of OA",
    "publication_year": 2018,
    "abstract_inverted_index": {
        "Despite": [0],
        "growing": [1],
        "interest": [2],
        "in": [3, 5],
        "Open": [4],
        "Access,": [6],
    },
}
# Positions 0..6: Despite growing interest in Open in Access,
ABSTRACT = "Despite growing interest in Open in Access,"


def test_rebuild_abstract_orders_words_by_position() -> None:
    assert rebuild_abstract({"b": [1, 3], "a": [0], "c": [2]}) == "a b c b"
    assert rebuild_abstract(WORK["abstract_inverted_index"]) == ABSTRACT


@pytest.mark.parametrize(
    "payload",
    [
        [WORK],  # JSON array
        {"meta": {"count": 1}, "results": [WORK]},  # an API page
        WORK,  # one work
    ],
)
def test_json_shapes(tmp_path: Path, payload: object) -> None:
    file = tmp_path / "works.json"
    file.write_text(json.dumps(payload))
    [(n, doc)] = list(OpenAlexReader().read(file))
    assert n == 1
    assert (doc.doc_id, doc.title, doc.text) == ("W2741809807", "The state of OA", ABSTRACT)
    assert doc.metadata["id"] == "https://openalex.org/W2741809807"
    assert doc.metadata["publication_year"] == 2018
    assert "abstract_inverted_index" not in doc.metadata


def test_jsonl_and_display_name_fallback(tmp_path: Path) -> None:
    other = {**WORK, "id": "https://openalex.org/W2", "title": None, "display_name": "Shown"}
    file = tmp_path / "works.jsonl"
    file.write_text(json.dumps(WORK) + "\n\n" + json.dumps(other) + "\n")
    docs = list(OpenAlexReader().read(file))
    assert [(n, d.doc_id, d.title) for n, d in docs] == [
        (1, "W2741809807", "The state of OA"),
        (3, "W2", "Shown"),
    ]


@pytest.mark.parametrize(
    ("change", "field", "problem"),
    [
        ({"abstract_inverted_index": None}, "abstract_inverted_index", "missing"),
        ({"abstract_inverted_index": {}}, "abstract_inverted_index", "empty"),
        (
            {"abstract_inverted_index": {"a": ["x"]}},
            "abstract_inverted_index",
            "not a {word: [positions]} map",
        ),
        ({"id": None}, "id", "missing"),
    ],
)
def test_bad_works(tmp_path: Path, change: dict, field: str, problem: str) -> None:
    file = tmp_path / "works.json"
    file.write_text(json.dumps([WORK, {**WORK, **change}]))
    with pytest.raises(InputError) as info:
        list(OpenAlexReader().read(file))
    assert str(info.value) == f"{file}:2: {field}: {problem}"


def test_not_a_list_of_works(tmp_path: Path) -> None:
    file = tmp_path / "works.json"
    file.write_text(json.dumps({"meta": {}}))
    with pytest.raises(InputError, match="results: expected a JSON array of works"):
        list(OpenAlexReader().read(file))
    file.write_text('[{"id": "W1",')
    with pytest.raises(InputError, match=r"works.json:1: record: invalid JSON"):
        list(OpenAlexReader().read(file))
    file.write_text('["W1"]')
    with pytest.raises(InputError, match=r"works.json:1: record: not a JSON object \(got str\)"):
        list(OpenAlexReader().read(file))
