"""Report arithmetic and formatting: mean ± sample std, best per column within a setting."""

from __future__ import annotations

import math

import pytest

from sciera.eval.aggregate import Row, mean_std
from sciera.eval.report import best_rows, cell_text, markdown_table


def test_mean_and_sample_std() -> None:
    cell = mean_std([0.5, 0.7, 0.9])
    assert cell.mean == pytest.approx(0.7)
    assert cell.std == pytest.approx(0.2)  # sqrt((0.04 + 0 + 0.04) / 2)
    assert mean_std([0.25]).std == 0.0
    assert mean_std([1.0, 0.0]).std == pytest.approx(math.sqrt(0.5))
    with pytest.raises(ValueError):
        mean_std([])


def rows() -> list[Row]:
    return [
        Row(
            "a",
            "base",
            10,
            3,
            {"hit@1": mean_std([0.5, 0.6, 0.7]), "s/q rerank": mean_std([2.0] * 3)},
        ),
        Row(
            "b",
            "base",
            10,
            3,
            {"hit@1": mean_std([0.2, 0.2, 0.2]), "s/q rerank": mean_std([1.0] * 3)},
        ),
        Row("a", "ssli", 10, 3, {"hit@1": mean_std([0.1, 0.1, 0.1])}),
        Row("b", "ssli", 10, 3, {"hit@1": mean_std([0.3, 0.3, 0.3])}),
    ]


def test_best_is_max_for_quality_min_for_cost_per_setting() -> None:
    r = rows()
    assert best_rows(r, "hit@1") == {0, 3}
    assert best_rows(r, "s/q rerank") == {1}


def test_markdown_marks_best_and_shows_std() -> None:
    md = markdown_table(rows(), "t")
    assert "| a | base | 10 | 3 | **0.6000 ± 0.1000** | 2.0000 ± 0.0000 |" in md
    assert "| b | base | 10 | 3 | 0.2000 ± 0.0000 | **1.0000 ± 0.0000** |" in md
    assert "| a | ssli | 10 | 3 | 0.1000 ± 0.0000 | – |" in md
    single = Row("c", "all", 5, 1, {"hit@1": mean_std([0.4])})
    assert cell_text(single, "hit@1") == "0.4000"
