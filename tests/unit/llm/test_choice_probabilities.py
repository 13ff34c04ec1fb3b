"""Scoring multi-token choices from next-token distributions (hand-computed values)."""

from __future__ import annotations

import math

import numpy as np
import pytest

from sciera.llm.llamacpp import choice_probabilities


def _table(dists: dict[tuple[int, ...], list[float]]):
    calls: list[tuple[int, ...]] = []

    def next_logprobs(prefix: tuple[int, ...]) -> np.ndarray:
        calls.append(prefix)
        return np.log(np.array(dists[prefix]))

    return next_logprobs, calls


def test_single_token_choices_are_renormalized() -> None:
    fn, calls = _table({(): [0.6, 0.2, 0.1, 0.1]})
    probs, raw = choice_probabilities({"yes": (0,), "no": (1,)}, fn)
    assert probs == pytest.approx({"yes": 0.75, "no": 0.25})
    assert raw == pytest.approx(0.8)
    assert calls == [()]


def test_prefix_choice_splits_mass_with_its_extension() -> None:
    # Grades "1" -> (1,) and "10" -> (1, 0): P(1) = 0.5, P(0 | 1) = 0.6.
    fn, calls = _table({(): [0.1, 0.5, 0.3, 0.1], (1,): [0.6, 0.1, 0.1, 0.2]})
    probs, raw = choice_probabilities({"0": (0,), "1": (1,), "2": (2,), "10": (1, 0)}, fn)
    # raw: "0" 0.1, "1" 0.5 * 0.4 = 0.2, "10" 0.5 * 0.6 = 0.3, "2" 0.3 -> total 0.9
    assert raw == pytest.approx(0.9)
    assert probs == pytest.approx({"0": 0.1 / 0.9, "1": 0.2 / 0.9, "2": 0.3 / 0.9, "10": 0.3 / 0.9})
    assert math.isclose(sum(probs.values()), 1.0)
    assert sorted(calls) == [(), (1,)]


def test_shared_first_token_branches_without_a_terminal_prefix() -> None:
    # "ab" = (0, 1) and "ac" = (0, 2) share token 0; "d" = (3,).
    fn, calls = _table({(): [0.4, 0.1, 0.1, 0.4], (0,): [0.1, 0.5, 0.25, 0.15]})
    probs, raw = choice_probabilities({"ab": (0, 1), "ac": (0, 2), "d": (3,)}, fn)
    assert raw == pytest.approx(0.4 * 0.5 + 0.4 * 0.25 + 0.4)
    assert probs["ab"] == pytest.approx(0.2 / 0.7)
    assert probs["d"] == pytest.approx(0.4 / 0.7)
    assert sorted(calls) == [(), (0,)]


def test_zero_mass_gives_uniform_with_zero_raw_mass() -> None:
    fn, _ = _table({(): [1.0, 0.0, 0.0]})
    with np.errstate(divide="ignore"):
        probs, raw = choice_probabilities({"x": (1,), "y": (2,)}, fn)
    assert probs == {"x": 0.5, "y": 0.5}
    assert raw == 0.0
