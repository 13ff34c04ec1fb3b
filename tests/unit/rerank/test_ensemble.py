import pytest

from conftest import QUERY, make_ranking
from sciera.rerank.base import rescored
from sciera.rerank.ensemble import EnsembleReranker


class Fixed:
    """A member with fixed per-passage scores (an input to the fusion under test)."""

    def __init__(self, name, scores):
        self.name, self.scores = name, scores

    def rerank(self, query, ranking):
        return rescored(ranking, [self.scores[it.passage_id] for it in ranking], self.name)

    def score(self, query, passage):
        return self.scores[passage.passage_id]


A = Fixed("a", {"d1#0": 0.0, "d2#0": 10.0, "d3#0": 5.0, "d4#0": 0.0, "d5#0": 2.0})
B = Fixed("b", {"d1#0": 1.0, "d2#0": 0.0, "d3#0": 0.5, "d4#0": 0.0, "d5#0": 0.0})


def test_minmax_fusion_hand_values():
    out = EnsembleReranker([(A, 1.0), (B, 3.0)]).rerank(QUERY, make_ranking())
    got = {it.passage_id: round(it.score, 6) for it in out}
    # a -> d2 1, d3 .5, d5 .2; b -> d1 1, d3 .5; fused = (a + 3 b) / 4
    assert got == {"d1#0": 0.75, "d2#0": 0.25, "d3#0": 0.5, "d4#0": 0.0, "d5#0": 0.05}
    assert out.passage_ids[:3] == ["d1#0", "d3#0", "d2#0"]
    m = out.items[0].provenance["ensemble"]["members"]
    assert m["1:b"] == {"weight": 3.0, "raw": 1.0, "normalized": 1.0}


def test_bioasq_preset_is_one_to_seven():
    ens = EnsembleReranker.bioasq(A, B)
    assert [w for _, w in ens.members] == [1.0, 7.0]
    out = ens.rerank(QUERY, make_ranking())
    assert out.items[0].score == pytest.approx(7 / 8)  # d1: a 0, b 1


def test_single_result_does_not_collapse_to_zero():
    out = EnsembleReranker([(A, 1.0), (B, 7.0)], "zscore").rerank(QUERY, make_ranking().top(1))
    assert out.items[0].score == 1.0


def test_member_that_drops_a_passage_gives_it_zero():
    class Dropper(Fixed):
        def rerank(self, query, ranking):
            full = super().rerank(query, ranking)
            return type(full)(query, full.items[:1], self.name)

    out = EnsembleReranker([(Dropper("d", A.scores), 1.0)]).rerank(QUERY, make_ranking())
    assert out.items[0].passage_id == "d2#0" and out.items[0].score == 1.0
    assert all(it.score == 0.0 for it in out.items[1:])


def test_bad_weights_rejected():
    with pytest.raises(ValueError):
        EnsembleReranker([(A, 0.0)])
    with pytest.raises(ValueError):
        EnsembleReranker([(A, 1.0)], "softmax")
