"""instances.jsonl round trip, bad-record errors, and the crash-tolerant checkpoint log."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from sciera.datasets.ssli.io import (
    JsonlLog,
    instance_stats,
    load_ssli,
    read_instances,
    write_instances,
)
from sciera.errors import InputError
from sciera.types import Candidate, QAInstance


def _instances() -> list[QAInstance]:
    cands = (
        Candidate("41#0", "Gold: over 720 species, “quoted” ünïcode"),
        Candidate("ssli:41-p0-q1:1", "A distractor.", True, "misleading"),
    )
    prov = {"source_doc": "41", "seed": 3, "timings": {"qa_s": 1.25}, "guidance": [{"DocID": 1}]}
    return [
        QAInstance("41-p0-q1/base", "How many?", "Over 720.", ("41#0",), "base", cands[:1], prov),
        QAInstance("41-p0-q1/ssli", "How many?", "Over 720.", ("41#0",), "ssli", cands, prov),
    ]


def test_write_load_write_is_byte_identical(tmp_path: Path) -> None:
    first, second = tmp_path / "a.jsonl", tmp_path / "b.jsonl"
    assert write_instances(_instances(), first) == 2
    loaded = read_instances(first)
    assert loaded[1].candidates[1].distractor_type == "misleading"
    assert loaded[0].provenance["timings"] == {"qa_s": 1.25}
    write_instances(loaded, second)
    assert first.read_bytes() == second.read_bytes()
    assert [i.id for i in load_ssli(first, setting="ssli")] == ["41-p0-q1/ssli"]


def test_bad_record_names_line_and_field(tmp_path: Path) -> None:
    path = tmp_path / "instances.jsonl"
    write_instances(_instances(), path)
    record = json.loads(path.read_text().splitlines()[1])
    record["candidates"][1]["is_distractor"] = "yes"
    path.write_text(path.read_text().splitlines()[0] + "\n" + json.dumps(record) + "\n")
    with pytest.raises(InputError) as err:
        load_ssli(tmp_path)
    assert err.value.line == 2 and err.value.field == "candidates[1].is_distractor"


def test_log_drops_a_half_written_line(tmp_path: Path) -> None:
    path = tmp_path / "log.jsonl"
    log = JsonlLog(path)
    log.append({"qid": "a"})
    with path.open("a") as f:
        f.write('{"qid": "b", "inst')  # killed mid-write
    log = JsonlLog(path)
    assert log.records == [{"qid": "a"}]
    log.append({"qid": "c"})
    assert [json.loads(x)["qid"] for x in path.read_text().splitlines()] == ["a", "c"]


def test_instance_stats_counts() -> None:
    stats = instance_stats(_instances())
    assert stats["per_setting"] == {"base": 1, "ssli": 1}
    assert stats["questions"] == 1
    assert stats["distractor_types"] == {"misleading": 1}
    assert stats["instances_missing_gold"] == 0
