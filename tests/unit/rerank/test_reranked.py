"""Retrieve-then-rerank: the head is reranked, the tail keeps the first stage's order."""

from __future__ import annotations

from sciera.rerank.base import rescored
from sciera.rerank.reranked import RerankedRetriever, rerank_head
from sciera.types import Passage, Ranking, ScoredPassage


class _Reverse:
    name = "reverse"

    def rerank(self, query, ranking):
        return rescored(ranking, [float(i) for i in range(len(ranking))], self.name, query=query)

    def score(self, query, passage):
        return 0.0


def _ranking() -> Ranking:
    # documents a, b, c, d; a has two passages
    ids = ["a#0", "b#0", "a#1", "c#0", "d#0"]
    items = tuple(
        ScoredPassage(Passage(p, p.split("#")[0], 0, "", p), 10.0 - n, n + 1)
        for n, p in enumerate(ids)
    )
    return Ranking("q", items, "bm25")


def test_document_head_reranked_tail_in_first_stage_order():
    out = rerank_head(_ranking(), _Reverse(), depth=2, unit="document")
    assert [it.passage_id for it in out] == ["b#0", "a#0", "c#0", "d#0"]
    assert [it.rank for it in out] == [1, 2, 3, 4]
    scores = [it.score for it in out]
    assert scores == sorted(scores, reverse=True)


def test_passage_head():
    out = rerank_head(_ranking(), _Reverse(), depth=3, unit="passage")
    assert [it.passage_id for it in out] == ["a#1", "b#0", "a#0", "c#0", "d#0"]


class _First:
    name = "bm25"

    def search_many(self, queries, k):
        return [_ranking() for _ in queries]

    def search(self, query, k):
        return _ranking()


def test_reranked_retriever_names_its_stages():
    rr = RerankedRetriever(_First(), _Reverse(), depth=2)
    assert rr.name == "bm25>reverse@2"
    assert [it.passage_id for it in rr.search("q", 5)][:2] == ["b#0", "a#0"]
