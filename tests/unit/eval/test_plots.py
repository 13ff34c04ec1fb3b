"""What the ablation plot draws: a missing metric is no bar, never a bar at 0."""

from __future__ import annotations

import pytest

from sciera.eval.aggregate import Row, mean_std
from sciera.eval.plots import ablation_bars


def _row(pipeline: str, setting: str, **cells: float) -> Row:
    return Row(pipeline, setting, 10, 1, {k: mean_std([v]) for k, v in cells.items()})


def test_a_metric_a_setting_lacks_gets_no_tick_and_a_row_without_it_no_bar():
    cols = ["hit@1", "cdr", "nrs@5"]
    base = [_row("bm25", "base", **{"hit@1": 0.75}), _row("ce", "base", **{"hit@1": 0.8})]
    shown, series = ablation_bars(base, cols, 0.4)
    assert shown == ["hit@1"]
    assert [(label, means) for label, _, means, _ in series] == [("bm25", [0.75]), ("ce", [0.8])]
    assert series[0][1] == [pytest.approx(-0.2)] and series[1][1] == [pytest.approx(0.2)]

    ssli = [
        _row("bm25", "ssli", **{"hit@1": 0.25, "cdr": 0.34}),
        _row("ce", "ssli", **{"hit@1": 0.6, "cdr": 0.9, "nrs@5": 0.8}),
    ]
    shown, series = ablation_bars(ssli, cols, 0.4)
    assert shown == cols
    assert series[0][2] == [0.25, 0.34] and len(series[0][1]) == 2  # no nrs@5 bar for bm25
    assert series[1][2] == [0.6, 0.9, 0.8]
    assert series[1][1] == [pytest.approx(x) for x in (0.2, 1.2, 2.2)]
