"""Retrieval evaluation helpers: Max-P runs, passage judgments, TREC run files."""

from __future__ import annotations

from pathlib import Path

import pytest

from sciera.errors import InputError, ScieraError
from sciera.eval.metrics import evaluate
from sciera.eval.retrieval import (
    passage_qrels,
    rankings_to_run,
    read_trec_run,
    run_depth,
    search_run,
    write_trec_run,
)
from sciera.types import Passage, Ranking


def _p(pid: str, text: str = "") -> Passage:
    doc, _, n = pid.partition("#")
    return Passage(passage_id=pid, doc_id=doc, index=int(n), title="", text=text or pid)


RANKING = Ranking.from_scores(
    "q", [(_p("d1#0"), 3.0), (_p("d2#0"), 5.0), (_p("d1#1"), 4.0), (_p("d3#2"), 1.0)], "bm25"
)


def test_document_run_is_max_p():
    run = rankings_to_run(["q1"], [RANKING], "document", depth=10)
    # d1 keeps its best passage (4.0, not 3.0); order d2, d1, d3
    assert run == {"q1": {"d2": 5.0, "d1": 4.0, "d3": 1.0}}
    assert list(rankings_to_run(["q1"], [RANKING], "document", depth=2)["q1"]) == ["d2", "d1"]


def test_passage_run_keeps_passages():
    run = rankings_to_run(["q1"], [RANKING], "passage", depth=3)
    assert run == {"q1": {"d2#0": 5.0, "d1#1": 4.0, "d1#0": 3.0}}


def test_passage_qrels_inherit_document_grade():
    passages = [_p("d1#0"), _p("d1#1"), _p("d2#0"), _p("d3#0")]
    lifted = passage_qrels({"q1": {"d1": 2, "d3": 0, "d9": 1}}, passages)
    assert lifted == {"q1": {"d1#0": 2, "d1#1": 2, "d3#0": 0}}  # d9 has no passage


def test_run_depth():
    assert run_depth(["ndcg@10", "recall@100"]) == 100
    assert run_depth(["ndcg@10"]) == 100  # at least 100
    assert run_depth(["recall@1000", "mrr"]) == 1000


class FixedRetriever:
    """Stand-in retriever: returns RANKING for every query, cut to k."""

    name = "fixed"

    def __init__(self) -> None:
        self.calls: list[tuple[int, int]] = []

    def search_many(self, queries: list[str], k: int) -> list[Ranking]:
        self.calls.append((len(queries), k))
        return [RANKING.top(k) for _ in queries]


def test_search_run_batches_and_retrieves_passages_deeper_for_documents():
    retriever = FixedRetriever()
    seen: list[tuple[int, int]] = []
    queries = {f"q{i}": "text" for i in range(5)}
    run, seconds = search_run(
        retriever, queries, depth=2, batch_size=2, progress=lambda d, t: seen.append((d, t))
    )
    # documents: passages fetched 10 x depth deep, in batches of 2, 2, 1
    assert retriever.calls == [(2, 20), (2, 20), (1, 20)]
    assert seen == [(2, 5), (4, 5), (5, 5)]
    assert run["q4"] == {"d2": 5.0, "d1": 4.0}
    assert seconds >= 0.0
    run, _ = search_run(retriever, {"q": "t"}, depth=2, unit="passage")
    assert retriever.calls[-1] == (1, 2) and run == {"q": {"d2#0": 5.0, "d1#1": 4.0}}
    with pytest.raises(ScieraError, match="unknown unit"):
        search_run(retriever, {"q": "t"}, depth=2, unit="sentence")  # type: ignore[arg-type]


def test_trec_run_round_trip_in_trec_eval_order(tmp_path: Path):
    # tie between a and b: trec_eval order puts b first; scores keep full precision
    run = {"q1": {"a": 0.1 + 0.2, "b": 0.30000000000000004, "c": 2.5}, "q2": {"x": 1.0}}
    path = tmp_path / "run.trec"
    assert write_trec_run(path, run, "sciera-test") == 4
    lines = path.read_text().splitlines()
    assert lines[:3] == [
        "q1 Q0 c 1 2.5 sciera-test",
        "q1 Q0 b 2 0.30000000000000004 sciera-test",
        "q1 Q0 a 3 0.30000000000000004 sciera-test",
    ]
    back = read_trec_run(path)
    assert back == run
    qrels = {"q1": {"a": 1}, "q2": {"x": 1}}
    assert evaluate(back, qrels, ["mrr"]) == evaluate(run, qrels, ["mrr"]) == {"mrr": 2 / 3}


def test_trec_run_errors(tmp_path: Path):
    with pytest.raises(ScieraError, match="one word"):
        write_trec_run(tmp_path / "r", {}, "two words")
    bad = tmp_path / "bad.trec"
    bad.write_text("q1 Q0 a 1 1.0 t\nq1 Q0 b 2 high t\n")
    with pytest.raises(InputError, match=r"bad.trec:2: score: not a number"):
        read_trec_run(bad)
    bad.write_text("q1 Q0 a 1 1.0\n")
    with pytest.raises(InputError, match=r":1: record: expected 6 columns"):
        read_trec_run(bad)
    bad.write_text("q1 Q0 a 1 1.0 t\nq1 Q0 a 2 0.5 t\n")
    with pytest.raises(InputError, match=r":2: docid: duplicate"):
        read_trec_run(bad)
