"""EM, token P/R/F1, ROUGE-L and ROUGE-SU4 on hand-computed examples."""

from __future__ import annotations

import pytest

from sciera.eval.metrics import (
    exact_match,
    rouge_l,
    rouge_su4,
    token_f1,
    token_precision,
    token_recall,
    token_scores,
)
from sciera.eval.metrics.generation import lcs_length, rouge_su


def test_exact_match():
    assert exact_match("The answer.", "answer") == 1.0
    assert exact_match("an Answer", "THE answer!") == 1.0
    assert exact_match("answers", "answer") == 0.0


def test_token_scores_bag_of_words():
    # pred -> [cat, sat, on, mat]; ref -> [cat, on, mat]; 3 shared
    scores = token_scores("The cat sat on the mat.", "a cat on a mat")
    assert scores.precision == pytest.approx(3 / 4)
    assert scores.recall == pytest.approx(1.0)
    assert scores.f1 == pytest.approx(2 * 0.75 * 1.0 / 1.75)  # 0.857142...
    assert token_f1("The cat sat on the mat.", "a cat on a mat") == pytest.approx(6 / 7)


def test_token_scores_count_duplicates_once_per_match():
    # pred [cat, cat, cat] vs ref [cat]: 1 shared -> P = 1/3, R = 1, F1 = 2 * (1/3) / (4/3) = 0.5
    assert token_precision("cat cat cat", "cat") == pytest.approx(1 / 3)
    assert token_recall("cat cat cat", "cat") == 1.0
    assert token_f1("cat cat cat", "cat") == pytest.approx(0.5)
    assert token_f1("dog", "cat") == 0.0


def test_token_scores_empty_after_normalization():
    assert token_f1("the", "a") == 1.0  # both empty
    assert token_f1("the", "cat") == 0.0
    assert token_recall("cat", "") == 0.0


def test_lcs_length():
    assert lcs_length("ABCBDAB", "BDCABA") == 4  # classic CLRS example (BCBA)
    assert lcs_length([], ["a"]) == 0


def test_rouge_l_lin_examples():
    # Lin (2004): S1 "police killed the gunman" vs reference "police kill the gunman":
    # LCS "police the gunman" = 3 -> P = R = 3/4
    assert rouge_l("police killed the gunman", "police kill the gunman") == pytest.approx(0.75)
    # "the gunman kill police": LCS = 2 ("the gunman") -> P = R = 2/4
    assert rouge_l("the gunman kill police", "police kill the gunman") == pytest.approx(0.5)
    # different lengths: LCS 2, P = 2/2, R = 2/4 -> F = 2 * 1 * 0.5 / 1.5
    assert rouge_l("Police, gunman!", "police kill the gunman") == pytest.approx(2 / 3)
    assert rouge_l("", "police") == 0.0


def test_rouge_su4_units_and_skip_limit():
    # "a b c" units: a, b, c, (a,b), (a,c), (b,c); "a c b": a, c, b, (a,c), (a,b), (c,b)
    # shared: 3 unigrams + (a,b) + (a,c) = 5 of 6 on each side
    assert rouge_su4("a b c", "a c b") == pytest.approx(5 / 6)
    # "a p q r s b": a..b has 4 words between -> (a,b) counted. Units: 6 unigrams + skip
    # bigrams 5 + 4 + 3 + 2 + 1 = 15 -> 21. Reference "a b": a, b, (a,b) = 3. Shared 3.
    # P = 3/21, R = 1 -> F = 2 * (1/7) / (8/7) = 1/4
    assert rouge_su4("a p q r s b", "a b") == pytest.approx(0.25)
    # one more word between (5): (a,b) no longer counted. Units: 7 + (5+5+4+3+2+1) = 27.
    # shared 2 (a, b) -> P = 2/27, R = 2/3 -> F = 2/15
    assert rouge_su4("a p q r s t b", "a b") == pytest.approx(2 / 15)
    # max_skip = 0 is ROUGE-SU0: bigrams + unigrams; "a b" vs "b a": 2 shared of 3 -> 2/3
    assert rouge_su("a b", "b a", max_skip=0) == pytest.approx(2 / 3)
