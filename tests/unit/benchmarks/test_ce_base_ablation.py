"""The base-model ablation's per-claim metrics and pairing."""

from __future__ import annotations

import numpy as np

from sciera.train.data import TrainQuery

SCRIPT = "ce_base_ablation"


def _claim(qid: str, gold: str) -> TrainQuery:
    cands = tuple((f"{d}#0", 1.0 / (i + 1)) for i, d in enumerate(["a", "b", "c"]))
    return TrainQuery(qid, "claim", (f"{gold}#0",), cands, frozenset({gold}))


def test_per_claim_metrics_follow_the_scores_and_keep_rank_order_on_ties():
    from sciera.train.ce_fit import per_query_metrics

    dev = [_claim("1", "b"), _claim("2", "c")]
    per = per_query_metrics(dev, [np.array([0.1, 0.9, 0.2]), np.array([0.5, 0.5, 0.5])])
    assert per["1"]["hit@1"] == 1.0 and per["1"]["ndcg@10"] == 1.0
    assert per["2"]["hit@1"] == 0.0  # a tie keeps the first stage's order: "a" first
    assert abs(per["2"]["ndcg@10"] - 0.5) < 1e-9  # gold third: 1 / log2(4)


def test_pairing_counts_claims_gained_and_lost(bench):
    a = {"1": {"ndcg@10": 1.0, "hit@1": 1.0}, "2": {"ndcg@10": 0.5, "hit@1": 0.0}}
    b = {"1": {"ndcg@10": 0.5, "hit@1": 0.0}, "2": {"ndcg@10": 1.0, "hit@1": 1.0}}
    got = bench.paired(a, b)
    assert got["queries"] == 2 and got["hit@1"]["gained"] == 1 and got["hit@1"]["lost"] == 1
    assert got["ndcg@10"]["diff"] == 0.0 and got["hit@1"]["p"] == 1.0
    assert bench.mean(b, "ndcg@10") == 0.75


def test_a_later_model_must_have_held_out_every_claim_of_the_first_ones_dev(bench):
    first = ["1", "2"]
    assert bench.held_out_missing(first, {"data": {"dev_qids": ["1", "2"]}}) == []
    assert bench.held_out_missing(first, {"data": {"dev_qids": ["3", "1", "2"]}}) == []
    assert bench.held_out_missing(first, {"data": {"dev_qids": ["1"]}}) == ["2"]


def test_pair_lengths_count_the_pairs_a_model_sees_cut(bench):
    def tokenizer(a, b):  # one token per word, plus [CLS] and two [SEP]
        return {"input_ids": [0] * (len(a.split()) + len(b.split()) + 3)}

    dev = [_claim("1", "b")]
    texts = {"a#0": "one two", "b#0": "one two three four five", "c#0": "x"}
    got = bench.pair_lengths(tokenizer, dev, texts, max_length=7)
    assert got["pairs"] == 3 and got["truncated"] == 1 / 3  # 1 + 5 + 3 = 9 > 7
    assert abs(got["mean_tokens"] - (6 + 9 + 5) / 3) < 1e-9
