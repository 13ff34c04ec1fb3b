"""Ranking metrics on hand-computed examples (trec_eval semantics)."""

from __future__ import annotations

import math

import pytest

from sciera.eval.metrics import (
    average_precision,
    hit_rate,
    ndcg,
    precision,
    recall,
    reciprocal_rank,
    relative_position,
    trec_order,
)

L3 = math.log2(3)  # discount of rank 2
GRADED = {"a": 1, "b": 0, "c": 2}


def test_ndcg_graded_gains_1_0_2():
    # ranked a, b, c -> gains [1, 0, 2]; DCG = 1/log2(2) + 0/log2(3) + 2/log2(4) = 1 + 1 = 2
    # ideal gains [2, 1] -> IDCG = 2/1 + 1/log2(3)
    assert ndcg(["a", "b", "c"], GRADED, 3) == pytest.approx(2 / (2 + 1 / L3))
    assert ndcg(["a", "b", "c"], GRADED, 3) == pytest.approx(0.760188, abs=1e-6)


def test_ndcg_cutoff_cuts_the_ideal_too():
    # @2: DCG = 1 (only "a" at rank 1); ideal [2, 1] cut at 2 -> 2 + 1/log2(3)
    assert ndcg(["a", "b", "c"], GRADED, 2) == pytest.approx(1 / (2 + 1 / L3))
    # @1: DCG = 1, IDCG = 2
    assert ndcg(["a", "b", "c"], GRADED, 1) == pytest.approx(0.5)


def test_ndcg_ideal_uses_unretrieved_relevant_docs():
    # only "a" retrieved; "z" is judged relevant but missing -> IDCG = 1 + 1/log2(3)
    assert ndcg(["a"], {"a": 1, "z": 1}, 10) == pytest.approx(1 / (1 + 1 / L3))


def test_ndcg_negative_grade_gives_no_gain_and_perfect_is_one():
    # "y" (grade -1) at rank 1 adds nothing; "z" at rank 2 -> DCG = 1/log2(3); IDCG = 1
    assert ndcg(["y", "z"], {"y": -1, "z": 1}, 10) == pytest.approx(1 / L3)
    assert ndcg(["c", "a", "b"], GRADED, 10) == pytest.approx(1.0)
    assert ndcg(["b"], {"b": 0}, 10) == 0.0  # no relevant doc judged


def test_ndcg_no_cutoff():
    # ranks 1..4 = x, x, x, c -> DCG = 2/log2(5); IDCG (all) = 2
    assert ndcg(["p", "q", "r", "c"], {"c": 2}) == pytest.approx((2 / math.log2(5)) / 2)


def test_average_precision_divides_by_all_relevant():
    ranked = ["x", "a", "y", "b"]
    rel = {"a": 1, "b": 2, "c": 1, "x": 0}
    # relevant at ranks 2 and 4: precisions 1/2 and 2/4; 3 relevant judged -> (0.5 + 0.5) / 3
    assert average_precision(ranked, rel, 10) == pytest.approx(1 / 3)
    # @2: only rank 2 counts -> 0.5 / 3
    assert average_precision(ranked, rel, 2) == pytest.approx(1 / 6)
    assert average_precision(ranked, rel) == pytest.approx(1 / 3)
    assert average_precision(ranked, {"x": 0}, 10) == 0.0


def test_reciprocal_rank_with_cutoff():
    assert reciprocal_rank(["x", "y", "a"], {"a": 1}) == pytest.approx(1 / 3)
    assert reciprocal_rank(["x", "y", "a"], {"a": 1}, 3) == pytest.approx(1 / 3)
    assert reciprocal_rank(["x", "y", "a"], {"a": 1}, 2) == 0.0
    assert reciprocal_rank(["x", "a"], {"x": 0, "a": 2}, 10) == 0.5  # grade 0 is not relevant


def test_recall_and_precision():
    ranked = ["a", "x", "b"]
    rel = {"a": 1, "b": 1, "c": 1}
    assert recall(ranked, rel, 2) == pytest.approx(1 / 3)  # a of {a, b, c}
    assert recall(ranked, rel, 3) == pytest.approx(2 / 3)
    assert recall(ranked, {"x": 0}, 3) == 0.0
    # P@5 divides by 5 even though only 3 docs were returned: 2 / 5
    assert precision(ranked, rel, 5) == pytest.approx(0.4)
    assert precision(ranked, rel, 1) == 1.0


def test_hit_rate():
    assert hit_rate(["x", "a"], {"a": 1}, 1) == 0.0
    assert hit_rate(["x", "a"], {"a": 1}, 2) == 1.0
    assert hit_rate(["x", "a"], {"a": 1}, 10) == 1.0  # shorter list counts what it has
    assert hit_rate([], {"a": 1}, 3) == 0.0


def test_relative_position():
    # N = 30: rank 1 -> 100; rank 30 -> 0; rank 4 -> 100 * 26 / 29
    cands = [f"d{i}" for i in range(30)]
    assert relative_position(cands, {"d0": 1}, 30) == 100.0
    assert relative_position(cands, {"d29": 1}, 30) == 0.0
    assert relative_position(cands, {"d3": 1}, 30) == pytest.approx(100 * 26 / 29)
    # the best-placed gold counts: ranks 2 and 5 among N = 5 -> 100 * 3 / 4
    assert relative_position(cands[:5], {"d1": 1, "d4": 1}, 5) == pytest.approx(75.0)


def test_relative_position_edge_cases():
    assert relative_position(["x", "y"], {"a": 1}, 30) == 0.0  # no gold survives
    assert relative_position([], {"a": 1}, 30) == 0.0
    # filtered list of 2 out of N = 30 candidates, gold at rank 2 -> 100 * 28 / 29
    assert relative_position(["x", "a"], {"a": 1}, 30) == pytest.approx(100 * 28 / 29)
    assert relative_position(["a"], {"a": 1}, 1) == 100.0  # N = 1
    assert relative_position(["x"], {"a": 1}, 1) == 0.0
    with pytest.raises(ValueError, match="only 1 candidates"):
        relative_position(["x", "a"], {"a": 1}, 1)
    with pytest.raises(ValueError, match="n_candidates"):
        relative_position([], {"a": 1}, 0)


def test_trec_order_breaks_ties_by_doc_id_descending():
    assert trec_order({"a": 1.0, "b": 1.0, "c": 2.0, "B": 1.0}) == ["c", "b", "a", "B"]


def test_neutral_order_sorts_by_score_and_breaks_ties_by_query_and_id() -> None:
    from sciera.eval.metrics.ranking import neutral_order

    scores = {"4983#0": 0.5, "ssli:q:1": 0.5, "top": 0.9, "low": 0.1}
    first = neutral_order("q", scores)
    assert first[0] == "top" and first[-1] == "low"
    assert set(first[1:3]) == {"4983#0", "ssli:q:1"}
    assert neutral_order("q", dict(reversed(list(scores.items())))) == first  # not input order
    # across questions a tied gold passage wins about half the time, not always or never
    wins = sum(
        neutral_order(f"q{i}", {"4983#0": 1.0, f"ssli:q{i}:1": 1.0})[0] == "4983#0"
        for i in range(400)
    )
    assert 150 < wins < 250
