"""Packed (gzipped) results: read transparently, written deterministically, resumed without
losing a line, and a packed results directory reports and restores exactly as before."""

from __future__ import annotations

import gzip
import json
from pathlib import Path

import pytest
from test_runner import experiment, scripted, table

from sciera.errors import ScieraError
from sciera.eval.report import write_report
from sciera.eval.resultlog import (
    QueryLog,
    open_text,
    pack,
    read_log,
    read_text,
    stored,
    unpack_for_append,
)
from sciera.eval.runner import run_experiment
from sciera.eval.runstore import (
    DERIVED,
    load_results,
    pack_results_dir,
    ranking_file,
    read_ranking,
    restore_outputs,
)

LINES = '{"qid":"q1","x":1}\n{"qid":"q2","x":2}\n'


def test_pack_is_deterministic_and_every_reader_takes_the_plain_name(tmp_path: Path) -> None:
    log = tmp_path / "results.jsonl"
    log.write_text(LINES)
    packed = pack(log)
    assert packed == tmp_path / "results.jsonl.gz" and not log.exists()
    first = packed.read_bytes()
    assert gzip.decompress(first).decode() == LINES
    log.write_text(LINES)
    assert pack(log).read_bytes() == first  # no name, no time: same bytes every time
    assert stored(log) == packed
    assert read_text(log) == LINES
    with open_text(log) as fh:
        assert fh.read() == LINES
    assert list(read_log(log)) == ["q1", "q2"]
    assert read_log(packed)["q2"]["x"] == 2  # the .gz name itself works too
    assert stored(tmp_path / "absent.jsonl") == tmp_path / "absent.jsonl"
    assert read_log(tmp_path / "absent.jsonl") == {}


def test_a_file_both_plain_and_packed_is_refused(tmp_path: Path) -> None:
    log = tmp_path / "rows.jsonl"
    log.write_text(LINES)
    pack(log)
    log.write_text(LINES)
    with pytest.raises(ScieraError, match=r"rows.jsonl: both it and rows.jsonl.gz exist"):
        read_log(log)


def test_a_packed_log_resumes_in_a_plain_file_with_every_line(tmp_path: Path) -> None:
    log = tmp_path / "results.jsonl"
    log.write_text(LINES)
    pack(log)
    with QueryLog.open(log) as ql:
        assert "q1" in ql and "q2" in ql
        ql.append({"qid": "q3", "x": 3})
    assert not (tmp_path / "results.jsonl.gz").exists()
    assert [json.loads(x)["qid"] for x in log.read_text().splitlines()] == ["q1", "q2", "q3"]
    assert unpack_for_append(log) == log and log.read_text().count("\n") == 3  # plain: as is


def test_a_packed_results_dir_reports_restores_and_resumes_as_before(tmp_path: Path) -> None:
    exp = experiment(tmp_path)
    out = tmp_path / "res"
    run_experiment(exp, out, llm_factory=scripted)
    write_report(out, plots=False)
    before = table(out)
    repeat = out / "runs" / "pointwise" / "r0"
    derived = {n: (repeat / n).read_bytes() for n in DERIVED if (repeat / n).is_file()}
    assert "run.trec" in derived and "first_stage.trec" in derived
    ranking = read_ranking(repeat / "run.trec")

    done = pack_results_dir(out)
    assert set(done["removed"]) >= {repeat / n for n in derived}
    assert (out / "dataset.json.gz").is_file() and (repeat / "results.jsonl.gz").is_file()
    assert not any((repeat / n).exists() for n in DERIVED)
    assert pack_results_dir(out) == {"packed": [], "removed": []}  # nothing left to pack

    assert ranking_file(repeat) == repeat / "results.jsonl.gz"
    assert read_ranking(ranking_file(repeat)) == ranking  # what the SSLI view shows
    write_report(out, plots=False)
    assert table(out) == before
    assert len(load_results(out).records["pointwise"]) == 2

    restore_outputs(out)
    assert {n: (repeat / n).read_bytes() for n in derived} == derived

    summary = run_experiment(exp, out, llm_factory=scripted)  # resume: nothing to run
    assert set(summary.ran.values()) == {0}
    assert (repeat / "results.jsonl").is_file() and not (repeat / "results.jsonl.gz").exists()
    assert (out / "dataset.json").is_file() and not (out / "dataset.json.gz").exists()
    write_report(out, plots=False)
    assert table(out) == before


def test_a_packed_rubrics_file_is_read_by_its_plain_name(tmp_path: Path) -> None:
    from sciera.eval.judges.rubric import load_rubrics

    path = tmp_path / "rubrics.jsonl"
    path.write_text(json.dumps({"question": "Does X?", "items": [{"text": "says X"}]}) + "\n")
    pack(path)
    (item,) = load_rubrics(path)["does x?"]
    assert item.text == "says X"
    with pytest.raises(ScieraError, match="no such rubrics file"):
        load_rubrics(tmp_path / "other.jsonl")
