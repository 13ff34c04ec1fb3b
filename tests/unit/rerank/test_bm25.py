"""The bm25 reranker: BM25 over the ranking's own passages, hand-computed values."""

from __future__ import annotations

import math

import pytest

from conftest import QUERY, make_ranking
from sciera.rerank.bm25 import BM25Reranker
from sciera.rerank.registry import make_reranker
from sciera.retrieve.bm25 import BM25Retriever
from sciera.settings import BM25Settings, load_settings
from sciera.types import Passage, Ranking, ScoredPassage

K1, B = 0.9, 0.4  # BM25Settings defaults (passages)


def pool(*texts: str, query: str = "cat") -> Ranking:
    items = tuple(
        ScoredPassage(Passage(f"p{i}", f"p{i}", 0, "", t), float(len(texts) - i), i + 1)
        for i, t in enumerate(texts)
    )
    return Ranking(query, items, "candidates")


def test_hand_computed_lucene_value() -> None:
    # N = 3, df(cat) = 1, lengths 3, 2, 1 -> avgdl 2; "cat" twice in p0
    out = BM25Reranker().rerank("cat", pool("cat cat dog", "dog fish", "bird"))
    idf = math.log(1 + (3 - 1 + 0.5) / (1 + 0.5))
    expected = idf * 2 / (2 + K1 * (1 - B + B * 3 / 2))
    assert out.passage_ids == ["p0", "p1", "p2"]
    assert out.items[0].score == pytest.approx(expected, rel=1e-6)
    assert [it.score for it in out.items[1:]] == [0.0, 0.0]
    # "dog" (df 2): the shorter passage wins on length normalization
    dog = BM25Reranker().rerank("dog", pool("cat cat dog", "dog fish", "bird"))
    idf = math.log(1 + (3 - 2 + 0.5) / (2 + 0.5))
    assert dog.passage_ids == ["p1", "p0", "p2"]
    assert dog.items[0].score == pytest.approx(idf / (1 + K1 * (1 - B + B * 2 / 2)), rel=1e-6)
    assert dog.items[1].score == pytest.approx(idf / (1 + K1 * (1 - B + B * 3 / 2)), rel=1e-6)


def test_passage_with_query_terms_outranks_one_without() -> None:
    # input order puts the matching passage last; stopwords and stems are the retriever's
    out = BM25Reranker().rerank(
        "the fractures of bones", pool("galaxies rotate", "a fractured bone")
    )
    assert out.passage_ids == ["p1", "p0"]
    assert out.items[0].score > 0.0 == out.items[1].score
    assert out.items[0].provenance["candidates"] == {"score": 1.0, "rank": 2}


def test_empty_ranking() -> None:
    out = BM25Reranker().rerank("cat", pool())
    assert len(out) == 0 and out.stage == "bm25"


def test_single_passage_is_its_own_collection() -> None:
    out = BM25Reranker().rerank("cat", pool("cat cat dog"))
    expected = math.log(1 + 0.5 / 1.5) * 2 / (2 + K1)  # N = df = 1, |p| = avgdl
    assert out.passage_ids == ["p0"] and out.items[0].rank == 1
    assert out.items[0].score == pytest.approx(expected, rel=1e-6)
    assert BM25Reranker().score("cat", out.items[0].passage) == pytest.approx(expected, rel=1e-6)


def test_query_without_known_terms_keeps_the_input_order() -> None:
    out = BM25Reranker().rerank("the of and", pool("cat", "dog", "bird"))
    assert out.passage_ids == ["p0", "p1", "p2"]
    assert {it.score for it in out.items} == {0.0}


def test_same_scores_as_the_bm25_retriever_over_the_same_passages() -> None:
    ranking = make_ranking()
    passages = [it.passage for it in ranking.items]
    retriever = BM25Retriever.build(passages, BM25Settings(), source=None)  # type: ignore[arg-type]
    expected = dict(retriever.search_hits([QUERY], k=len(passages))[0])
    got = {it.passage_id: it.score for it in BM25Reranker().rerank(QUERY, ranking)}
    assert got == pytest.approx({p.passage_id: expected.get(p.passage_id, 0.0) for p in passages})


def test_built_from_settings_with_overrides() -> None:
    settings = load_settings(bm25={"k1": 1.2})
    rr = make_reranker("bm25", settings, b=0.75)
    assert isinstance(rr, BM25Reranker)
    assert (rr.settings.k1, rr.settings.b, rr.settings.method) == (1.2, 0.75, "lucene")
    with pytest.raises(ValueError, match="unknown parameters"):
        make_reranker("bm25", settings, k3=1.0)
