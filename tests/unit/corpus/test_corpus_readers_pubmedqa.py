"""PubMedQA's PQA files as a corpus: one document per PubMed id from its contexts, never
its question or answer."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from sciera.corpus.readers import PubmedqaReader, detect_format
from sciera.errors import InputError

PQA = {
    "21645374": {
        "QUESTION": "Do mitochondria play a role in remodelling lace plant leaves?",
        "CONTEXTS": ["Programmed cell death (PCD) is ...", "  The lace plant forms holes. "],
        "LABELS": ["BACKGROUND", "RESULTS"],
        "MESHES": ["Apoptosis"],
        "YEAR": "2011",
        "reasoning_required_pred": "yes",
        "final_decision": "yes",
        "LONG_ANSWER": "Results depicted mitochondrial dynamics in vivo as PCD progresses.",
    },
    "16418930": {"QUESTION": "Q?", "CONTEXTS": ["Only one passage."], "final_decision": "no"},
}


def _write(tmp_path: Path, value: object, name: str = "ori_pqal.json") -> Path:
    file = tmp_path / name
    file.write_text(json.dumps(value))
    return file


def test_each_pmid_is_a_document_of_its_contexts_without_question_or_answer(tmp_path):
    file = _write(tmp_path, PQA)
    assert detect_format(file) == "pubmedqa"
    (n1, a), (n2, b) = list(PubmedqaReader().read(file))
    assert (n1, n2) == (1, 2)
    assert (a.doc_id, a.title) == ("21645374", "")
    assert a.text == "Programmed cell death (PCD) is ... The lace plant forms holes."
    assert dict(a.metadata) == {
        "LABELS": ["BACKGROUND", "RESULTS"],
        "MESHES": ["Apoptosis"],
        "YEAR": "2011",
    }
    everything = json.dumps([a.text, dict(a.metadata), b.text, dict(b.metadata)])
    for leak in ("Do mitochondria", "mitochondrial dynamics", "final_decision", "QUESTION"):
        assert leak not in everything
    assert (b.doc_id, b.text, dict(b.metadata)) == ("16418930", "Only one passage.", {})


def test_other_json_stays_openalex_and_the_shape_check_is_strict(tmp_path):
    work = {"id": "https://openalex.org/W1", "abstract_inverted_index": {"CONTEXTS": [0]}}
    assert detect_format(_write(tmp_path, [work], "works.json")) == "openalex"
    assert detect_format(_write(tmp_path, work, "one.json")) == "openalex"
    # only an object of PQA entries is PubMedQA: not an empty object, not a list of them
    assert detect_format(_write(tmp_path, PQA, "pqa.json")) == "pubmedqa"
    assert detect_format(_write(tmp_path, {}, "empty.json")) == "openalex"
    assert detect_format(_write(tmp_path, [PQA], "listed.json")) == "openalex"


@pytest.mark.parametrize(
    ("item", "field"),
    [
        ({"QUESTION": "Q?"}, "CONTEXTS"),
        ({"CONTEXTS": []}, "CONTEXTS"),
        ({"CONTEXTS": ["ok", 3]}, "CONTEXTS[1]"),
        ({"CONTEXTS": ["ok", "  "]}, "CONTEXTS[1]"),
        ("not an object", "record"),
    ],
)
def test_a_bad_entry_names_its_record_and_field(tmp_path, item, field):
    file = _write(tmp_path, {"1": {"CONTEXTS": ["fine."]}, "2": item})
    reader = PubmedqaReader()
    records = list(reader.records(file))
    assert reader.parse(file, *records[0]).doc_id == "1"
    with pytest.raises(InputError) as err:
        reader.parse(file, *records[1])
    assert err.value.line == 2 and err.value.field == field
    assert str(file) in str(err.value)


def test_a_file_that_is_not_an_object_is_one_line(tmp_path):
    with pytest.raises(InputError, match="JSON object of"):
        list(PubmedqaReader().records(_write(tmp_path, [1, 2])))
