"""Max-P: best passage per document, in order, with provenance."""

from __future__ import annotations

from sciera.retrieve.base import MemoryPassages
from sciera.retrieve.maxp import MaxPRetriever, maxp
from sciera.types import Passage, Ranking


def _p(doc: str, i: int) -> Passage:
    return Passage(f"{doc}#{i}", doc, i, f"title {doc}", f"passage {i} of {doc}")


RANKING = Ranking.from_scores(
    "q",
    [(_p("A", 1), 9.0), (_p("B", 0), 8.0), (_p("A", 0), 7.5), (_p("C", 2), 7.0), (_p("B", 1), 1.0)],
    "bm25",
)


def test_maxp_keeps_best_passage_per_document():
    docs = maxp(RANKING)
    assert [it.passage.doc_id for it in docs] == ["A", "B", "C"]
    assert [it.passage_id for it in docs] == ["A#1", "B#0", "C#2"]
    assert [it.score for it in docs] == [9.0, 8.0, 7.0]
    assert [it.rank for it in docs] == [1, 2, 3]
    assert docs.stage == "bm25+maxp"
    assert dict(docs[0].provenance["maxp"]) == {"doc_id": "A", "passage_rank": 1, "hits": 2}
    assert docs[2].provenance["maxp"]["passage_rank"] == 4


def test_maxp_cut_to_k():
    assert [it.passage.doc_id for it in maxp(RANKING, 2)] == ["A", "B"]


class _Fixed:
    """A component stand-in returning RANKING cut to k."""

    name = "fixed"

    def __init__(self) -> None:
        self.asked: list[int] = []

    def search_many(self, queries, k):
        self.asked.append(k)
        return [RANKING.top(k) for _ in queries]

    def search(self, query, k):
        return self.search_many([query], k)[0]


def test_maxp_retriever_searches_deeper_then_aggregates():
    inner = _Fixed()
    retriever = MaxPRetriever(inner, depth=50)
    result = retriever.search("q", 2)
    assert inner.asked == [50]
    assert [it.passage.doc_id for it in result] == ["A", "B"]
    assert retriever.name == "fixed+maxp"
    assert len(MemoryPassages([_p("A", 0)])) == 1
