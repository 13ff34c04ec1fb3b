"""Paired tests, against hand-computed values and scipy as an independent reference."""

from __future__ import annotations

import math
import random

import numpy as np
import pytest
from scipy import stats

from sciera.eval.significance import f1_randomization, mcnemar_exact, paired_randomization


def test_mcnemar_hand_values() -> None:
    # A right on 5 queries B misses, B right on none of A's misses: 2 * (1/2)**5
    t = mcnemar_exact([1, 1, 1, 1, 1, 1, 0], [0, 0, 0, 0, 0, 1, 0])
    assert (t.b_only, t.a_only, t.n) == (0, 5, 7)
    assert t.p_value == pytest.approx(0.0625) and t.mean_diff == pytest.approx(-5 / 7)
    # 3 vs 3 discordant: as balanced as it gets
    assert mcnemar_exact([1, 1, 1, 0, 0, 0], [0, 0, 0, 1, 1, 1]).p_value == 1.0
    # identical systems: no discordant query, nothing to test
    same = mcnemar_exact([1, 0, 1], [1, 0, 1])
    assert same.p_value == 1.0 and same.b_only == same.a_only == 0


def test_mcnemar_matches_scipy_binomtest() -> None:
    rng = random.Random(3)
    for _ in range(200):
        n = rng.randint(1, 60)
        a = [rng.random() < 0.6 for _ in range(n)]
        b = [rng.random() < rng.random() for _ in range(n)]
        t = mcnemar_exact(a, b)
        d = t.b_only + t.a_only
        want = stats.binomtest(t.b_only, d, 0.5).pvalue if d else 1.0
        assert t.p_value == pytest.approx(want, rel=1e-9), (a, b)


def test_randomization_hand_value() -> None:
    # differences (1, 1, 1): of the 8 sign patterns only +++ and --- reach |mean| 1
    t = paired_randomization([0, 0, 0], [1, 1, 1])
    assert t.exact and t.p_value == pytest.approx(2 / 8) and t.mean_diff == 1.0
    # a zero difference flips onto itself: (2, 0) has patterns +2 and -2, both extreme
    assert paired_randomization([0, 0], [2, 0]).p_value == 1.0
    assert paired_randomization([0.5, 0.2], [0.5, 0.2]).p_value == 1.0


def test_randomization_exact_matches_scipy_permutation_test() -> None:
    rng = np.random.default_rng(5)
    for n in (2, 5, 9, 12):  # scipy needs two or more
        a = rng.random(n)
        b = a + rng.normal(0.1, 0.2, n)
        b[0] = a[0]  # one tie, as ranked lists often have
        want = stats.permutation_test(
            (b, a),
            lambda x, y: np.mean(x - y),
            permutation_type="samples",
            n_resamples=math.inf,
        ).pvalue
        got = paired_randomization(a.tolist(), b.tolist())
        assert got.exact and got.p_value == pytest.approx(want, abs=1e-9), n


def test_randomization_monte_carlo_is_close_to_exact_and_seeded() -> None:
    rng = np.random.default_rng(11)
    a = rng.random(18)
    b = a + rng.normal(0.05, 0.3, 18)
    exact = paired_randomization(a.tolist(), b.tolist(), n_resamples=2**18)
    mc = paired_randomization(a.tolist(), b.tolist(), n_resamples=40_000, seed=1)
    assert exact.exact and not mc.exact
    assert abs(mc.p_value - exact.p_value) < 0.01
    again = paired_randomization(a.tolist(), b.tolist(), n_resamples=40_000, seed=1)
    assert again.p_value == mc.p_value
    assert mc.p_value > 0  # the observed pattern counts


@pytest.mark.parametrize(
    ("a", "b", "message"),
    [
        ([1.0, 0.0], [1.0], "one score per query"),
        ([], [], "at least one query"),
        ([1.0, float("nan")], [1.0, 0.0], "finite"),
    ],
)
def test_bad_input_is_refused(a: list[float], b: list[float], message: str) -> None:
    with pytest.raises(ValueError, match=message):
        paired_randomization(a, b)
    if "finite" not in message:
        with pytest.raises(ValueError, match=message):
            mcnemar_exact(a, b)


def test_mcnemar_takes_only_right_or_wrong() -> None:
    with pytest.raises(ValueError, match="0/1"):
        mcnemar_exact([1, 0.5], [1, 0])


def test_f1_randomization_identical_systems_and_a_clear_gain() -> None:
    same = [(1, 2, 2)] * 10
    out = f1_randomization(same, same, n_resamples=200)
    assert out.mean_diff == 0.0 and out.p_value == 1.0
    a = [(0, 1, 1)] * 30  # F1 0
    b = [(1, 1, 1)] * 30  # F1 1
    out = f1_randomization(a, b, n_resamples=2000)
    assert out.mean_diff == pytest.approx(1.0) and out.test == "f1_randomization"
    assert out.p_value == pytest.approx(1 / 2001) and out.n == 30
    with pytest.raises(ValueError, match="per query"):
        f1_randomization([(1, 1, 1)], [(1, 1)])


def test_f1_randomization_is_over_summed_counts_not_a_mean() -> None:
    # A: 2 claims right of 2 predicted, 4 gold -> F1 = 4 / 6; B: 3 of 4 predicted -> 6 / 8
    a = [(1, 1, 2), (1, 1, 2)]
    b = [(2, 2, 2), (1, 2, 2)]
    out = f1_randomization(a, b, n_resamples=1000)
    assert out.mean_diff == pytest.approx(6 / 8 - 4 / 6)
    # swapping one claim moves the F1s 6/7 vs 4/7 apart (|diff| 2/7 > 1/12), swapping both
    # gives -1/12: every one of the four patterns is as extreme as the observed one
    assert out.p_value == 1.0
