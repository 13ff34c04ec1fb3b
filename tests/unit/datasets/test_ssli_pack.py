"""A packed SSLI set holds no corpus text and unpacks to the same instances.jsonl."""

from __future__ import annotations

import gzip
import json
from pathlib import Path

import pytest

from sciera.datasets.ssli.io import write_instances
from sciera.datasets.ssli.pack import unpack, unpack_to, write_packed
from sciera.errors import InputError
from sciera.types import Candidate, Passage, QAInstance

CORPUS = {
    "41#0": Passage("41#0", "41", 0, "Mammals", "Over 720 species, “quoted” ünïcode."),
    "7#0": Passage("7#0", "7", 0, "Birds", "Finches on islands."),
}


class Store:
    """The one PassageStore method unpack uses."""

    def __init__(self, passages: dict[str, Passage]) -> None:
        self.passages = passages

    def find_passages(self, ids):
        return {i: self.passages[i] for i in ids if i in self.passages}


def _instances() -> list[QAInstance]:
    gold, other = (Candidate(pid, CORPUS[pid].contents) for pid in ("41#0", "7#0"))
    fake = Candidate("ssli:q1:1", "Reptile collections grew in 1850.", True, "misleading")
    prov = {"source_doc": "41", "guidance": [{"DocID": 1}]}
    return [
        QAInstance("q1/base", "How many?", "Over 720.", ("41#0",), "base", (gold, other), prov),
        QAInstance("q1/ssli", "How many?", "Over 720.", ("41#0",), "ssli", (gold, fake), prov),
    ]


@pytest.mark.parametrize("name", ["set.packed.jsonl", "set.packed.jsonl.gz"])
def test_pack_then_unpack_is_byte_identical(tmp_path: Path, name: str) -> None:
    write_instances(_instances(), tmp_path / "instances.jsonl")
    packed = tmp_path / name
    assert write_packed(_instances(), packed) == 2
    raw = gzip.decompress(packed.read_bytes()) if name.endswith(".gz") else packed.read_bytes()
    text = raw.decode()
    assert "Finches" not in text and "720 species" not in text  # no corpus text
    assert "Reptile collections" in text  # the builder's own distractor stays
    assert unpack_to(packed, Store(CORPUS), tmp_path / "out") == 2
    assert (tmp_path / "out" / "instances.jsonl").read_bytes() == (
        tmp_path / "instances.jsonl"
    ).read_bytes()


def test_a_passage_missing_from_the_corpus_names_line_and_candidate(tmp_path: Path) -> None:
    packed = tmp_path / "set.jsonl"
    write_packed(_instances(), packed)
    with pytest.raises(InputError) as exc:
        unpack(packed, Store({"41#0": CORPUS["41#0"]}))
    assert "set.jsonl" in str(exc.value) and "candidates[1].passage_id" in str(exc.value)
    assert "'7#0' is not in the corpus" in str(exc.value)


def test_a_file_that_is_not_gzip_is_a_clear_input_error(tmp_path: Path) -> None:
    bad = tmp_path / "set.jsonl.gz"
    bad.write_text(json.dumps({"id": "x"}) + "\n")
    with pytest.raises(InputError, match="unreadable"):
        unpack(bad, Store(CORPUS))


def test_an_empty_packed_file_is_refused_and_writes_nothing(tmp_path: Path) -> None:
    empty = tmp_path / "set.jsonl.gz"
    with gzip.open(empty, "wt"):
        pass
    with pytest.raises(InputError, match=r"set\.jsonl\.gz: instances: the file holds no instance"):
        unpack_to(empty, Store(CORPUS), tmp_path / "out")
    assert not (tmp_path / "out").exists()
