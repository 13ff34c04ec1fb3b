"""The checks every Reranker backend must pass (used by unit and integration tests)."""

from __future__ import annotations

import json

from sciera.rerank.base import Reranker
from sciera.types import Ranking


def snapshot(ranking: Ranking) -> list[tuple]:
    """Deep value snapshot (provenance may hold nested, mutable dicts)."""
    return [
        (it.passage, it.score, it.rank, json.dumps(dict(it.provenance), sort_keys=True))
        for it in ranking.items
    ]


def check_reranker(reranker: Reranker, ranking: Ranking, *, subset: bool = False) -> Ranking:
    assert isinstance(reranker, Reranker)
    before = snapshot(ranking)
    out = reranker.rerank(ranking.query, ranking)
    assert isinstance(out, Ranking)
    assert snapshot(ranking) == before, "input ranking was mutated"
    ids_in, ids_out = ranking.passage_ids, out.passage_ids
    assert len(set(ids_out)) == len(ids_out), "duplicate passages"
    if subset:
        assert set(ids_out) <= set(ids_in)
    else:
        assert sorted(ids_out) == sorted(ids_in)
    assert [it.rank for it in out.items] == list(range(1, len(out) + 1))
    scores = [it.score for it in out.items]
    assert scores == sorted(scores, reverse=True)
    assert all(isinstance(s, float) for s in scores)
    assert out.query == ranking.query
    by_id = {it.passage_id: it.passage for it in ranking.items}
    assert all(it.passage == by_id[it.passage_id] for it in out.items)

    empty = reranker.rerank(ranking.query, Ranking(ranking.query, (), ranking.stage))
    assert isinstance(empty, Ranking) and len(empty) == 0

    single = reranker.rerank(ranking.query, ranking.top(1))
    assert len(single) <= 1 if subset else len(single) == 1
    for it in single.items:
        assert it.rank == 1 and it.passage_id == ranking.items[0].passage_id

    s = reranker.score(ranking.query, ranking.items[0].passage)
    assert isinstance(s, float)
    return out
