import pytest

from conftest import QUERY, HashEmbedder, OverlapLLM, make_ranking
from sciera.rerank.base import rescored
from sciera.rerank.ensemble import EnsembleReranker, check_params
from sciera.rerank.normalize import rank_based
from sciera.rerank.registry import make_reranker, uses_llm
from sciera.settings import load_settings


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


def test_named_members_from_config_fuse_bm25_and_embedding_by_rank():
    params = {
        "normalization": "rank",
        "members": [
            {"name": "bm25", "weight": 1.0},
            {"name": "embedding", "weight": 1.0, "params": {"embedder": HashEmbedder()}},
        ],
    }
    ens = make_reranker("ensemble", load_settings(), **params)
    assert [(m.name, w) for m, w in ens.members] == [("bm25", 1.0), ("embedding", 1.0)]
    ranking = make_ranking()
    out = ens.rerank(QUERY, ranking)
    ids = ranking.passage_ids
    parts = []
    for member, _ in ens.members:
        raw = {it.passage_id: it.score for it in member.rerank(QUERY, ranking)}
        parts.append(dict(zip(ids, rank_based([raw[p] for p in ids]), strict=True)))
    assert {it.passage_id: it.score for it in out} == pytest.approx(
        {p: (parts[0][p] + parts[1][p]) / 2 for p in ids}
    )
    assert out.items[0].provenance["ensemble"]["normalization"] == "rank"


def test_rank_normalization_hand_values_with_ties():
    ens = make_reranker(
        "ensemble", load_settings(), normalization="rank", members=[{"name": "bm25"}]
    )
    # bm25 for "galaxies": d4 > 0, four ties at 0 -> d4 = 5/5, the others (5 - 2 + 1)/5
    got = {it.passage_id: it.score for it in ens.rerank("galaxies", make_ranking())}
    assert got == pytest.approx({"d4#0": 1.0, "d1#0": 0.8, "d2#0": 0.8, "d3#0": 0.8, "d5#0": 0.8})


def test_llm_goes_only_to_llm_members():
    llm = OverlapLLM()
    members = [{"name": "llm_pointwise", "weight": 7}, {"name": "bm25"}]
    ens = make_reranker("ensemble", load_settings(), members=members, llm=llm)
    assert ens.members[0][0].llm is llm and ens.members[0][1] == 7.0
    assert ens.members[1][0].name == "bm25"


def test_uses_llm_follows_the_members():
    lexical_dense = {"members": [{"name": "bm25"}, {"name": "embedding"}]}
    assert not uses_llm("ensemble", lexical_dense)
    assert uses_llm("ensemble", {"members": [{"name": "bm25"}, {"name": "llm_listwise"}]})
    assert uses_llm("ensemble", {})  # the bioasq preset
    assert not uses_llm("bm25") and uses_llm("deepera")


@pytest.mark.parametrize(
    ("members", "message"),
    [
        ([{"name": "bm52"}], r"members\[0\]: unknown reranker 'bm52'"),
        ([{"name": "bm25"}, {"name": "bm25", "wieght": 1}], r"members\[1\]: unknown keys"),
        ([{"name": "bm25", "weight": -1}], r"members\[0\]: weight must be a number >= 0"),
        ([], "members: expected a non-empty list"),
    ],
)
def test_bad_named_members_rejected(members, message):
    with pytest.raises(ValueError, match=message):
        check_params({"members": members})
