"""BioASQ yes/no pairs on the real file: 406 questions (263 yes / 143 no), kept as questions,
7B and 8B train, 9B dev and nothing else; a batch outside those is a one-line error."""

from __future__ import annotations

import json
from collections import Counter
from pathlib import Path

import pytest

from sciera.datasets.pairs import LabelledPair, load_pairs
from sciera.errors import InputError
from sciera.types import CONTRADICT, SUPPORT

DATA = Path(__file__).resolve().parents[4] / "shared" / "data" / "bioasq"


@pytest.fixture(scope="module")
def pairs() -> list[LabelledPair]:
    return load_pairs("bioasq", DATA)


def test_counts_and_split_by_batch(pairs: list[LabelledPair]) -> None:
    # the data README says 262 / 144: one answer (8B5, 5e3c6e15b5b409ea53000023) is "Yes"
    assert Counter(p.label for p in pairs) == {SUPPORT: 263, CONTRADICT: 143}
    assert pairs[[p.id for p in pairs].index("5e3c6e15b5b409ea53000023")].label == SUPPORT
    assert Counter((p.split, p.label) for p in pairs) == {
        ("train", SUPPORT): 188,
        ("train", CONTRADICT): 102,
        ("dev", SUPPORT): 75,
        ("dev", CONTRADICT): 41,
    }
    questions = json.loads((DATA / "training_7b_9b.json").read_text())["questions"]
    batch = {q["id"]: q["batch"] for q in questions}
    assert all((p.split == "dev") == batch[p.id].startswith("9B") for p in pairs)
    assert {p.form for p in pairs} == {"question"}
    assert len({p.group for p in pairs}) == 406


def test_snippets_are_the_evidence(pairs: list[LabelledPair]) -> None:
    assert pairs[0].claim == "Is Baloxavir effective for influenza?"
    assert pairs[0].evidence[0].startswith("Baloxavir marboxil (Xofluza™; baloxavir) is an oral")
    assert all(p.evidence and len(set(p.evidence)) == len(p.evidence) for p in pairs)


def _file(folder: Path, batch: str) -> Path:
    folder.mkdir()
    question = {
        "id": "q1",
        "type": "yesno",
        "body": "Is it?",
        "exact_answer": "yes",
        "batch": batch,
        "snippets": [{"text": "It is.", "document": "http://www.ncbi.nlm.nih.gov/pubmed/1"}],
    }
    (folder / "training_7b_9b.json").write_text(json.dumps({"questions": [question]}))
    return folder


def test_other_batches_are_an_error(tmp_path: Path) -> None:
    assert [p.split for p in load_pairs("bioasq", _file(tmp_path / "a", "8B3"))] == ["train"]
    with pytest.raises(InputError) as err:
        load_pairs("bioasq", _file(tmp_path / "b", "10B1"))
    message = str(err.value)
    assert "\n" not in message and "training_7b_9b.json" in message
    assert "question q1: batch: '10B1' is not a 7B, 8B or 9B batch" in message
