"""SciFact training pairs and their lockbox: about 15% of the claims by a SHA-256 hash of the
claim id (the same set on every run and machine), disjoint from train, whole claims only."""

from __future__ import annotations

import json
from collections import Counter
from pathlib import Path

import pytest

from sciera.datasets.pairs import LabelledPair, bucket, load_pairs, scifact_lockbox
from sciera.errors import InputError
from sciera.types import CONTRADICT, NOT_ENOUGH_INFO, SUPPORT

DATA = Path(__file__).resolve().parents[4] / "shared" / "data" / "scifact"


@pytest.fixture(scope="module")
def pairs() -> list[LabelledPair]:
    return load_pairs("scifact", DATA)


def test_counts(pairs: list[LabelledPair]) -> None:
    assert len(pairs) == 919  # one pair per cited abstract, as qrels/train.tsv judges them
    assert len({p.group for p in pairs}) == 809
    assert Counter((p.split, p.label) for p in pairs) == {
        ("train", SUPPORT): 327,
        ("train", CONTRADICT): 164,
        ("train", NOT_ENOUGH_INFO): 305,
        ("lockbox", SUPPORT): 43,
        ("lockbox", CONTRADICT): 30,
        ("lockbox", NOT_ENOUGH_INFO): 50,
    }


def test_lockbox_is_stable_and_disjoint(pairs: list[LabelledPair]) -> None:
    lockbox = {p.group for p in pairs if p.split == "lockbox"}
    train = {p.group for p in load_pairs("scifact", DATA, split="train")}
    assert not lockbox & train
    assert 0.1 < len(lockbox) / 809 < 0.2
    # fixed values: a change to the hash or the share would move the lockbox
    assert sorted(int(g.split(":")[1]) for g in lockbox)[:6] == [18, 21, 22, 24, 35, 61]
    assert 0.0 <= bucket("13", "scifact-lockbox") < 1.0
    assert scifact_lockbox(18) and scifact_lockbox("18") and not scifact_lockbox(19)


def test_rationales_index_the_abstract(pairs: list[LabelledPair]) -> None:
    for p in pairs:
        assert p.rationale is not None and all(i < len(p.evidence) for i in p.rationale)
        assert bool(p.rationale) == (p.label != NOT_ENOUGH_INFO)


def test_uncorpused_abstract_is_one_line(tmp_path: Path) -> None:
    sentence = {"doc_id": 11, "title": "T", "abstract": ["S."], "structured": False}
    claim = {"id": 5, "claim": "C.", "evidence": {}, "cited_doc_ids": [12]}
    (tmp_path / "corpus_sentences.jsonl").write_text(json.dumps(sentence) + "\n")
    (tmp_path / "claims_train.jsonl").write_text(json.dumps(claim) + "\n")
    with pytest.raises(InputError) as err:
        load_pairs("scifact", tmp_path)
    assert "\n" not in str(err.value)
    assert "claims_train.jsonl:claim 5: cited_doc_ids: 12 is not in" in str(err.value)
