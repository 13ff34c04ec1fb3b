"""The verification benchmarks' shared helpers: the baseline's BM25 sentences and the paired
F1 randomization test (hand-computed values)."""

from __future__ import annotations

import pytest

SCRIPT = "verify_common"


def test_bm25_closest_sentences(bench):
    bm25 = bench.Bm25Sentences()
    sents = ["Aspirin lowers colorectal cancer risk.", "Methods were standard.", "Aspirin."]
    assert bm25.closest("Does aspirin lower colorectal cancer risk?", sents, 2) == [0, 2]
    assert bm25.scores("the of", sents) == [0.0, 0.0, 0.0]  # stopwords only
    assert bm25.closest("x", [], 2) == []


def test_f1_randomization_identical_systems_and_a_clear_gain(bench):
    same = [(1, 2, 2)] * 10
    out = bench.f1_randomization(same, same, n_resamples=200)
    assert out["diff"] == 0.0 and out["p_value"] == 1.0
    a = [(0, 1, 1)] * 30  # F1 0
    b = [(1, 1, 1)] * 30  # F1 1
    out = bench.f1_randomization(a, b, n_resamples=2000)
    assert out["diff"] == pytest.approx(1.0)
    assert out["p_value"] < 0.01 and out["n"] == 30
    with pytest.raises(ValueError):
        bench.f1_randomization([(1, 1, 1)], [(1, 1)])
