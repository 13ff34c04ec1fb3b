"""The split discipline: evaluation queries and SSLI abstracts never reach training."""

from __future__ import annotations

from pathlib import Path

import pytest

from sciera.train.splits import SplitGuard, SplitViolation, dev_split, ssli_gold_docs

REPO = Path(__file__).resolve().parents[3]
SHIPPED_SSLI = REPO / "benchmarks/results/ssli_scifact_100/build/instances.packed.jsonl.gz"


def _qrels(path: Path, rows: list[tuple[str, str, int]]) -> Path:
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(
        "query-id\tcorpus-id\tscore\n" + "".join(f"{q}\t{d}\t{g}\n" for q, d, g in rows)
    )
    return path


def test_dev_split_is_whole_queries_seeded_and_disjoint():
    qids = [str(i) for i in range(100)]
    train, dev = dev_split(qids, 0.12, seed=3)
    assert len(dev) == 12 and len(train) == 88
    assert not set(train) & set(dev) and set(train) | set(dev) == set(qids)
    assert dev_split(reversed(qids), 0.12, seed=3) == (train, dev)  # order of input irrelevant
    assert dev_split(qids, 0.12, seed=4)[1] != dev
    assert dev_split(qids, 0.0, seed=3) == (sorted(qids), [])
    with pytest.raises(ValueError):
        dev_split(qids, 1.0, seed=0)


def test_guard_excludes_the_test_split_beside_the_training_qrels(tmp_path):
    train = _qrels(tmp_path / "qrels" / "train.tsv", [("1", "a", 1), ("2", "b", 1)])
    _qrels(tmp_path / "qrels" / "test.tsv", [("9", "c", 1)])
    queries = {
        "1": "Obesity decreases life quality.",
        "2": "x",
        "9": "obesity DECREASES life quality",
    }
    guard = SplitGuard.for_training(train, queries)
    assert guard.query_problem("9", "anything") == "eval_query_id"
    # a training query worded like a test query (SciFact has two) is refused too
    assert guard.query_problem("1", queries["1"]) == "eval_query_text"
    assert guard.query_problem("2", "x") is None
    with pytest.raises(SplitViolation, match="evaluation"):
        guard.check_query("9", "y")
    assert guard.describe()["excluded_queries"] == 1


def test_guard_refuses_to_exclude_its_own_training_file(tmp_path):
    train = _qrels(tmp_path / "train.tsv", [("1", "a", 1)])
    with pytest.raises(SplitViolation):
        SplitGuard.for_training(train, exclude_qrels=[train])


def test_ssli_gold_abstracts_are_forbidden_on_both_sides():
    docs = ssli_gold_docs(SHIPPED_SSLI)
    assert len(docs) == 76  # the shipped set's 159 questions come from 76 abstracts
    guard = SplitGuard()
    guard.exclude_ssli(SHIPPED_SSLI)
    one = sorted(docs)[0]
    assert guard.allowed_docs([one, "not-an-ssli-doc"]) == ["not-an-ssli-doc"]
    with pytest.raises(SplitViolation, match="SSLI"):
        guard.check_docs([one])
    guard.check_docs(["not-an-ssli-doc"])


def test_ssli_file_without_gold_names_the_line(tmp_path):
    bad = tmp_path / "instances.jsonl"
    bad.write_text('{"id": "q", "gold_passage_ids": []}\n')
    with pytest.raises(Exception, match=r"instances.jsonl:1: gold_passage_ids"):
        ssli_gold_docs(bad)
