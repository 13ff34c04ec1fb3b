"""Fusion on hand-computed values (RRF as in ranx's tests, weighted min-max)."""

from __future__ import annotations

import pytest

from sciera.retrieve.fusion import fuse, min_max, rrf, weighted
from sciera.types import Passage, Ranking


def _p(pid: str) -> Passage:
    return Passage(pid, pid.split("#")[0], 0, "", f"text of {pid}")


def _ranking(pairs: list[tuple[str, float]], query: str = "q") -> Ranking:
    return Ranking.from_scores(query, [(_p(pid), s) for pid, s in pairs], "x")


@pytest.fixture
def two_rankings() -> dict[str, Ranking]:
    return {
        "bm25": _ranking([("a#0", 12.0), ("b#0", 9.0), ("c#0", 3.0)]),
        "dense": _ranking([("c#0", 0.9), ("d#0", 0.8), ("a#0", 0.5)]),
    }


def test_rrf_scores_match_hand_computation(two_rankings):
    scores = {p.passage_id: s for p, s, _ in rrf(two_rankings, k=60)}
    assert scores["a#0"] == pytest.approx(1 / (60 + 1) + 1 / (60 + 3))
    assert scores["c#0"] == pytest.approx(1 / (60 + 3) + 1 / (60 + 1))
    assert scores["b#0"] == pytest.approx(1 / (60 + 2))
    assert scores["d#0"] == pytest.approx(1 / (60 + 2))


def test_rrf_weights_scale_each_component(two_rankings):
    scores = {p.passage_id: s for p, s, _ in rrf(two_rankings, {"bm25": 2.0, "dense": 0.5})}
    assert scores["a#0"] == pytest.approx(2 / 61 + 0.5 / 63)
    assert scores["d#0"] == pytest.approx(0.5 / 62)


def test_fused_ranking_order_ties_and_provenance(two_rankings):
    fused = fuse(two_rankings, "rrf", stage="hybrid")
    # a and c tie (1/61 + 1/63); ties break by passage id; b and d tie (1/62)
    assert fused.passage_ids == ["a#0", "c#0", "b#0", "d#0"]
    assert [item.rank for item in fused] == [1, 2, 3, 4]
    assert fused.stage == "hybrid"
    top = fused[0]
    assert top.provenance["bm25"] == {"rank": 1, "score": 12.0}
    assert top.provenance["dense"] == {"rank": 3, "score": 0.5}
    assert "dense" not in fused[2].provenance  # b only came from bm25


def test_min_max():
    assert min_max([12.0, 9.0, 3.0]) == pytest.approx([1.0, 2 / 3, 0.0])
    assert min_max([5.0, 5.0]) == [1.0, 1.0]
    assert min_max([]) == []


def test_weighted_fusion_hand_computed(two_rankings):
    scores = {p.passage_id: s for p, s, _ in weighted(two_rankings, {"bm25": 0.3, "dense": 0.7})}
    # bm25 normalized: a=1, b=2/3, c=0 ; dense normalized: c=1, d=0.75, a=0
    assert scores["a#0"] == pytest.approx(0.3 * 1.0 + 0.7 * 0.0)
    assert scores["b#0"] == pytest.approx(0.3 * 2 / 3)
    assert scores["c#0"] == pytest.approx(0.3 * 0.0 + 0.7 * 1.0)
    assert scores["d#0"] == pytest.approx(0.7 * 0.75)
    fused = fuse(two_rankings, "weighted", {"bm25": 0.3, "dense": 0.7})
    assert fused.passage_ids == ["c#0", "d#0", "a#0", "b#0"]


def test_fuse_rejects_unknown_method_and_mixed_queries(two_rankings):
    with pytest.raises(ValueError, match="unknown fusion"):
        fuse(two_rankings, "borda")
    mixed = {"x": _ranking([("a#0", 1.0)], "q1"), "y": _ranking([("a#0", 1.0)], "q2")}
    with pytest.raises(ValueError, match="different queries"):
        fuse(mixed)
