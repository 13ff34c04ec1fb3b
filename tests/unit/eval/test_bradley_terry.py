"""Bradley–Terry ratings: differential against choix's maximum-likelihood fit, ties as
half wins, the prior, and bootstrap intervals over questions."""

from __future__ import annotations

import math

import choix
import pytest

from sciera.eval.bradley_terry import BASE, SCALE, fit, rate

SYSTEMS = ["a", "b", "c", "d"]
WINS = [  # (winner, loser), every system has won and lost
    *[("a", "b")] * 7,
    *[("b", "a")] * 3,
    *[("a", "c")] * 8,
    *[("c", "a")] * 2,
    *[("b", "c")] * 6,
    *[("c", "b")] * 4,
    *[("c", "d")] * 5,
    *[("d", "c")] * 5,
    *[("a", "d")] * 9,
    *[("d", "a")] * 1,
    *[("b", "d")] * 6,
    *[("d", "b")] * 4,
]


def elo(params) -> list[float]:
    centred = [p - sum(params) / len(params) for p in params]
    return [BASE + SCALE * v / math.log(10) for v in centred]


def test_maximum_likelihood_matches_choix():
    ours = fit([(w, l_, 1.0) for w, l_ in WINS], SYSTEMS, prior=0.0)
    idx = {s: i for i, s in enumerate(SYSTEMS)}
    ref = choix.ilsr_pairwise(4, [(idx[w], idx[l_]) for w, l_ in WINS], alpha=0.0, tol=1e-12)
    assert [ours[s] for s in SYSTEMS] == pytest.approx(elo(ref), abs=1e-4)
    assert ours["a"] > ours["b"] > ours["c"] > ours["d"]


def test_a_tie_is_half_a_win_for_each_side():
    decisive = [(w, l_, 1.0) for w, l_ in WINS]
    with_ties = decisive + [("a", "d", 0.5)] * 4
    # the same as two more wins each way, in choix's terms
    idx = {s: i for i, s in enumerate(SYSTEMS)}
    doubled = [(idx[w], idx[l_]) for w, l_ in WINS] * 2 + [(0, 3), (3, 0)] * 4
    ref = choix.ilsr_pairwise(4, doubled, alpha=0.0, tol=1e-12)
    ours = fit(with_ties, SYSTEMS, prior=0.0)
    assert [ours[s] for s in SYSTEMS] == pytest.approx(elo(ref), abs=1e-4)


def test_the_prior_keeps_a_system_that_never_won_finite():
    battles = [("a", "b", 1.0)] * 5
    with pytest.raises(ValueError, match="must have won and lost"):
        fit(battles, ["a", "b"], prior=0.0)
    ratings = fit(battles, ["a", "b"], prior=0.5)
    # 5.25 wins of 5.5 games: odds 21 to 1
    assert ratings["a"] - ratings["b"] == pytest.approx(SCALE * math.log10(21), abs=1e-6)
    assert (ratings["a"] + ratings["b"]) / 2 == pytest.approx(BASE)


def test_bad_battles_raise():
    with pytest.raises(ValueError, match="bad battle"):
        fit([("a", "a", 1.0)], ["a", "b"])
    with pytest.raises(ValueError, match="bad battle"):
        fit([("a", "b", 2.0)], ["a", "b"])


def test_bootstrap_intervals_are_seeded_and_hold_the_point_estimate():
    by_question = {f"q{i}": [(w, l_, 1.0)] for i, (w, l_) in enumerate(WINS)}
    first = rate(by_question, SYSTEMS, bootstrap=200, seed=3)
    again = rate(by_question, SYSTEMS, bootstrap=200, seed=3)
    assert first == again and [r.system for r in first] == ["a", "b", "c", "d"]
    for r in first:
        assert r.low <= r.rating <= r.high and r.high - r.low > 0
    a = first[0]
    assert a.battles == 30 and a.wins == 24 and a.win_rate == pytest.approx(0.8)
    fewer = rate(dict(list(by_question.items())[:20]), SYSTEMS, bootstrap=0)
    assert all(r.low == r.rating == r.high for r in fewer)  # no resamples: no interval
