"""rerank_trained: the tau table read off a fused run, and logits computed once."""

from __future__ import annotations

import json

import pytest

from sciera.types import Passage

SCRIPT = "rerank_trained"


def test_tau_table_by_hand(bench):
    # q1: head probabilities a 0.9 (gold), b 0.6; tail c below 0. q2: nothing above 0.5,
    # its gold d in the candidates -> answerable with nothing kept at tau >= 0.5
    run = {"q1": {"a": 0.9, "b": 0.6, "c": -1.4}, "q2": {"d": 0.4, "e": 0.2}}
    base = {"q1": {"b": 3.0, "a": 2.0, "c": 1.0}, "q2": {"d": 2.0, "e": 1.0}}
    qrels = {"q1": {"a": 1}, "q2": {"d": 1}}
    t = bench.tau_table(run, qrels, base, depth=2)
    assert t["0.5"] == {
        "kept": 2,
        "precision": 0.5,
        "recall_of_candidate_gold": 0.5,
        "answerable": 2,
        "answerable_with_nothing_kept": 1,
        "refused": ["q2"],
    }
    assert t["0.3"]["kept"] == 3 and t["0.3"]["precision"] == pytest.approx(2 / 3)
    assert t["0.9"]["kept"] == 1 and t["0.9"]["precision"] == 1.0
    assert t["0.3"]["answerable_with_nothing_kept"] == 0


def test_refusals_are_paired_on_the_same_answerable_queries(bench):
    mine = {"0.8": {"answerable": 10, "refused": ["a", "b"]}}
    theirs = {"0.8": {"answerable": 10, "refused": ["b", "c", "d", "e", "f", "g"]}}
    t = bench.refusals_versus(mine, theirs)["0.8"]
    # of 10 answerable: c..g refused only there (5), a only here (1), b by both, 3 by neither
    assert (t["a_only"], t["b_only"]) == (5, 1) and t["n"] == 10
    assert t["mean_diff"] == pytest.approx((2 - 6) / 10)
    assert bench.refusals_versus(mine, {"0.8": {"answerable": 10}}) == {}
    with pytest.raises(SystemExit, match="not the same queries"):
        bench.refusals_versus(mine, {"0.8": {"answerable": 9, "refused": []}})


def test_rankings_are_paired_per_query_when_both_files_keep_them(bench):
    mine = {q: {"ndcg@10": 1.0, "hit@1": 1.0} for q in "abcdefgh"}
    theirs = {q: {"ndcg@10": 0.5, "hit@1": float(q in "ab")} for q in "abcdefgh"}
    t = bench.ranking_versus(mine, theirs)
    assert (t["hit@1"]["a_only"], t["hit@1"]["b_only"]) == (0, 6)
    assert t["ndcg@10"]["mean_diff"] == pytest.approx(0.5)
    assert t["hit@1"]["p_value"] == pytest.approx(2 / 2**6)  # exact two-sided, 6 discordant
    assert bench.ranking_versus(mine, None) == {}  # a file from before per-query values
    with pytest.raises(SystemExit, match="other queries"):
        bench.ranking_versus(mine, {"a": theirs["a"]})


def test_versus_file_must_be_a_run_over_the_same_queries_and_first_stage(bench, tmp_path):
    path = tmp_path / "other.json"
    run = {
        "dataset": "pubmedqa",
        "queries": 500,
        "first_stage": {"name": bench.first_stage_name("e")},
    }
    path.write_text(json.dumps(run))
    assert bench.load_versus(path, "pubmedqa", 500, "e") == run
    assert bench.load_versus(None, "pubmedqa", 500, "e") is None
    for args in (("scifact", 500, "e"), ("pubmedqa", 499, "e"), ("pubmedqa", 500, "minilm")):
        with pytest.raises(SystemExit, match="same queries and first stage"):
            bench.load_versus(path, *args)


def test_memo_logits_computes_each_pair_once(bench):
    calls = []

    def inner(query, passages):
        calls.append([p.passage_id for p in passages])
        return [float(len(p.passage_id)) for p in passages]

    memo = bench.MemoLogits(inner)
    ps = [Passage(f"{d}#0", d, 0, "", d) for d in ("a", "bb", "ccc")]
    assert memo("q", ps[:2]) == [3.0, 4.0]
    assert memo("q", ps) == [3.0, 4.0, 5.0]
    assert calls == [["a#0", "bb#0"], ["ccc#0"]] and memo.pairs == 3
