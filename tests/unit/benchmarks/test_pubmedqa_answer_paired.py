"""Pairing two pubmedqa_answer.py runs question by question (hand-checked counts)."""

from __future__ import annotations

import json

import pytest

SCRIPT = "pubmedqa_answer_paired"


def _write(path, preds, extractor="deepera_ce"):
    lines = [
        {"setting": "retrieval", "extractor": extractor, "pmid": str(i), "gold": "yes", "pred": p}
        for i, p in enumerate(preds)
    ]
    lines.append(
        {"setting": "reasoning", "extractor": extractor, "pmid": "0", "gold": "yes", "pred": "no"}
    )
    path.write_text("".join(json.dumps(x) + "\n" for x in lines))
    return path


def test_refusals_and_accuracy_are_paired_per_question(bench, tmp_path):
    a = _write(tmp_path / "a.jsonl", ["refused", "refused", "no", "yes", "refused"])
    b = _write(tmp_path / "b.jsonl", ["yes", "refused", "yes", "yes", "no", "yes"])  # 5: only b
    got = bench.paired(
        bench.rows(a, "deepera_ce", "retrieval"), bench.rows(b, "deepera_ce", "retrieval")
    )
    assert got["questions"] == 5
    # right: a {3}, b {0, 2, 3}; refused: a {0, 1, 4}, b {1}
    assert got["correct"] == {"a": 1, "b": 3, "b_only": 2, "a_only": 0, "p": pytest.approx(0.5)}
    assert got["refused"]["a"] == 3 and got["refused"]["b"] == 1
    assert (got["refused"]["b_only"], got["refused"]["a_only"]) == (0, 2)
    assert bench.rows(a, "full", "retrieval") == {}
