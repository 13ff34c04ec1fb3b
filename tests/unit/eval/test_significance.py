"""Paired tests, against hand-computed values and scipy as an independent reference."""

from __future__ import annotations

import math
import random

import numpy as np
import pytest
from scipy import stats

from sciera.eval.significance import mcnemar_exact, paired_randomization


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
