"""Training records from mined candidates, groups and the dev metrics (no model)."""

from __future__ import annotations

import math
import random

import numpy as np
import pytest

from sciera.train.ce_fit import dev_rankings, make_groups, ranking_metrics
from sciera.train.data import TrainQuery, build_queries
from sciera.train.splits import SplitGuard
from sciera.types import Passage


class _Store:
    def __init__(self, ids: list[str]) -> None:
        self.ids = ids

    def find_passages(self, ids):
        return {i: Passage(i, i.split("#")[0], 0, "", f"text {i}") for i in ids if i in self.ids}


def test_build_queries_positives_negatives_and_exclusions():
    store = _Store(["g1#0", "g1#1", "n1#0", "n2#0", "g2#0", "ssli#0", "n3#0"])
    queries = {"q1": "claim one", "q2": "claim two", "q3": "no text? no: has text", "q4": "x"}
    qrels = {"q1": {"g1": 1, "zero": 0}, "q2": {"g2": 1}, "q3": {"ssli": 1}, "q5": {"g1": 1}}
    mined = {
        # the first stage found g1 by its second passage: that passage is the positive
        "q1": [["n1#0", 3.0], ["g1#1", 2.0], ["ssli#0", 1.5], ["n2#0", 1.0]],
        "q2": [["n3#0", 2.0]],  # g2 missed: its first passage stands in
        "q3": [["n1#0", 1.0]],
    }
    guard = SplitGuard(doc_ids={"ssli"})
    recs, skipped = build_queries(store, queries, qrels, mined, guard)
    by = {r.qid: r for r in recs}
    assert sorted(by) == ["q1", "q2"]
    assert by["q1"].positives == ("g1#1",)
    assert by["q1"].negatives == ["n1#0", "n2#0"]  # the SSLI abstract is gone from negatives
    assert by["q2"].positives == ("g2#0",) and by["q2"].negatives == ["n3#0"]
    assert skipped["no_query_text"] == 1  # q5
    assert skipped["no_positive"] == 1  # q3: its only gold abstract is forbidden
    assert skipped["forbidden_positive_docs"] == 1 and skipped["forbidden_candidates"] == 1


def test_build_queries_leaves_out_evaluation_queries():
    guard = SplitGuard(query_ids={"q1"})
    recs, skipped = build_queries(
        _Store(["g#0", "n#0"]), {"q1": "a"}, {"q1": {"g": 1}}, {"q1": [["n#0", 1.0]]}, guard
    )
    assert recs == [] and skipped["eval_query_id"] == 1


def _rec(qid: str, cands: list[str], gold: set[str]) -> TrainQuery:
    return TrainQuery(
        qid,
        "q",
        tuple(f"{g}#0" for g in sorted(gold)),
        tuple((f"{c}#0", 1.0) for c in cands),
        frozenset(gold),
    )


def test_ranking_metrics_by_hand():
    a = _rec("a", ["x", "g", "y"], {"g"})
    b = _rec("b", ["g", "h", "x"], {"g", "h", "missing"})
    m = ranking_metrics([a, b], [np.array([0.1, 0.9, 0.0]), np.array([0.0, 0.0, 1.0])])
    # a: gold first -> nDCG 1, hit 1. b: order x, g, h (ties stable) -> DCG 1/log2(3)+1/2,
    # ideal over 3 gold documents (one never retrieved) 1 + 1/log2(3) + 1/2
    dcg_b = 1 / math.log2(3) + 1 / 2
    ideal_b = 1 + 1 / math.log2(3) + 1 / 2
    assert m["ndcg@10"] == pytest.approx((1 + dcg_b / ideal_b) / 2)
    assert m["hit@1"] == 0.5 and m["queries"] == 2


def test_dev_rankings_scores_each_querys_candidates_in_order_and_reports_progress():
    recs = [_rec("a", ["x", "g"], {"g"}), _rec("b", ["g", "h", "y"], {"g"})]
    texts = {f"{c}#0": f"text {c}" for c in "xghy"}
    seen, calls = [], []

    def score(query, passages):
        seen.append((query, list(passages)))
        return np.arange(len(passages), dtype=float)

    out = dev_rankings(None, recs, texts, score, lambda *a: calls.append(a), "cal")
    assert [o.tolist() for o in out] == [[0.0, 1.0], [0.0, 1.0, 2.0]]
    assert seen == [("q", ["text x", "text g"]), ("q", ["text g", "text h", "text y"])]
    assert calls == [("cal", 1, 2), ("cal", 2, 2)]


def test_make_groups_one_per_positive_with_sampled_negatives():
    recs = [
        _rec("a", ["x", "y", "z", "g"], {"g"}),
        _rec("b", ["u"], {"g", "h"}),
        _rec("c", ["g"], {"g"}),
    ]  # c has no negative: no group
    groups = make_groups(recs, 2, random.Random(0))
    assert len(groups) == 3
    for _qid, pids in groups:
        assert len(pids) == 3 and pids[0].split("#")[0] in {"g", "h"}
        assert all(p.split("#")[0] not in {"g", "h"} for p in pids[1:])
    assert make_groups(recs, 2, random.Random(0)) == groups
