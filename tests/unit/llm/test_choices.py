"""Mapping top-token logprobs to choice distributions (hand-computed values)."""

from __future__ import annotations

import math

import pytest

from sciera.llm.choices import choice_distribution, one_hot


def lp(p: float) -> float:
    return math.log(p)


def test_tokens_are_stripped_case_folded_and_summed() -> None:
    top = [("yes", lp(0.4)), (" Yes", lp(0.2)), ("YES\n", lp(0.1)), ("no", lp(0.1)), ("x", lp(0.2))]
    probs, mass = choice_distribution(top, ["yes", "no"])
    assert mass == pytest.approx(0.8)
    assert probs == pytest.approx({"yes": 0.875, "no": 0.125})


def test_duplicate_tokens_count_once() -> None:
    top = [("no", lp(0.5)), ("no", lp(0.5)), ("yes", lp(0.25))]
    probs, mass = choice_distribution(top, ["yes", "no"])
    assert mass == pytest.approx(0.75)
    assert probs == pytest.approx({"yes": 1 / 3, "no": 2 / 3})


def test_case_sensitive_when_choices_differ_only_by_case() -> None:
    top = [("A", lp(0.3)), ("a", lp(0.1)), (" a", lp(0.1))]
    probs, _ = choice_distribution(top, ["A", "a"])
    assert probs == pytest.approx({"A": 0.6, "a": 0.4})


def test_no_mass_gives_zeros_not_a_guess() -> None:
    probs, mass = choice_distribution([("The", lp(0.9)), ("yes", float("-inf"))], ["yes", "no"])
    assert mass == 0.0 and probs == {"yes": 0.0, "no": 0.0}


def test_numeric_choices() -> None:
    top = [(str(i), lp(p)) for i, p in [(8, 0.5), (9, 0.3), (2, 0.2)]]
    probs, _ = choice_distribution(top, [str(i) for i in range(11)])
    expected = {str(i): 0.0 for i in range(11)} | {"8": 0.5, "9": 0.3, "2": 0.2}
    assert probs == pytest.approx(expected)


def test_one_hot() -> None:
    assert one_hot("no", ["yes", "no"]) == {"yes": 0.0, "no": 1.0}
    assert one_hot(None, ["yes", "no"]) == {"yes": 0.0, "no": 0.0}
