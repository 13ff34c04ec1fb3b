"""rerank_headroom reads DeepEra traces in first-stage order and ranks them by each score."""

from __future__ import annotations

import json
from pathlib import Path

import numpy as np

SCRIPT = "rerank_headroom"


def _trace(qid: str, grades: list[float]) -> dict:
    """Candidates d0, d1, ... written in reverse first-stage order (d0 is rank 1)."""
    passages = [
        {
            "passage_id": f"d{i}#0",
            "first_stage_rank": i + 1,
            "first_stage_score": 1.0 - i / 10,
            "grade_expectation": g,
            "calibrated": g / 2,
        }
        for i, g in enumerate(grades)
    ]
    return {"reranker": "deepera_nofilter", "qid": qid, "trace": {"passages": passages[::-1]}}


def test_records_follow_first_stage_order_and_rank_by_score(bench, tmp_path: Path) -> None:
    rows = tmp_path / "rows.jsonl"
    lines = [_trace("q1", [0.2, 0.9, 0.1]), {"reranker": "first_stage", "qid": "q1"}]
    rows.write_text("".join(json.dumps(x) + "\n" for x in lines))
    qrels = {"q1": {"d1": 1}}
    records = bench.records_from_traces(rows, "deepera_nofilter", qrels)
    assert [row["doc"] for row in records[0]["rows"]] == ["d0", "d1", "d2"]
    assert [row["label"] for row in records[0]["rows"]] == [0, 1, 0]
    assert records[0]["rows"][1]["grade_minus_best"] == 0.0
    assert records[0]["rows"][0]["first_stage_norm"] == 1.0
    # ties keep the first-stage order (d0 first: a miss); the grade puts d1 first (a hit)
    assert bench.ranked_scores(records, np.zeros(3), qrels)["hit@1"] == 0.0
    assert bench.ranked_scores(records, np.array([0.2, 0.9, 0.1]), qrels)["hit@1"] == 1.0


def test_rrf_adds_first_stage_and_grade_ranks(bench) -> None:
    records = [{"qid": "q", "rows": [{"grade": 0.1}, {"grade": 0.5}]}]
    rrf = bench.rrf_of_grade(records, k=0)
    assert np.allclose(rrf, [1 / 1 + 1 / 2, 1 / 2 + 1 / 1])
