"""Bradley–Terry ratings of systems from pairwise battles, on the Elo scale, with
bootstrap confidence intervals over questions (ResearchQA's leaderboard).

A battle is ``(x, y, s)`` with ``s`` = 1 when x won, 0.5 for a tie, 0 when y won; a tie
counts as half a win for each side. Strengths ``p`` maximize the likelihood of
P(x beats y) = p_x / (p_x + p_y), found by Hunter's (2004) minorization–maximization
updates; ``prior`` adds that many virtual ties to every pair of systems, so a system that
never won (or never lost) still gets a finite rating (0 gives the plain maximum-likelihood
fit, which needs every system to have won and lost). Ratings are
``1000 + 400 * log10(p)`` with the geometric mean of ``p`` at 1, so a gap of 400 points
means odds of 10 to 1.
"""

from __future__ import annotations

import math
import random
from collections.abc import Mapping, Sequence
from dataclasses import dataclass

Battle = tuple[str, str, float]
BASE, SCALE = 1000.0, 400.0


def fit(
    battles: Sequence[Battle],
    systems: Sequence[str],
    *,
    prior: float = 0.5,
    max_iter: int = 10_000,
    tol: float = 1e-10,
) -> dict[str, float]:
    """Elo-scale ratings of ``systems`` (every name in a battle must be one of them)."""
    index = {s: i for i, s in enumerate(systems)}
    n = len(systems)
    wins = [0.0] * n
    games = [[0.0] * n for _ in range(n)]
    for x, y, s in battles:
        i, j = index[x], index[y]
        if i == j or not 0.0 <= s <= 1.0:
            raise ValueError(f"bad battle {(x, y, s)!r}")
        wins[i] += s
        wins[j] += 1.0 - s
        games[i][j] += 1.0
        games[j][i] += 1.0
    if prior > 0:
        for i in range(n):
            for j in range(n):
                if i != j:
                    games[i][j] += prior
                    wins[i] += prior / 2
    if prior <= 0 and any(w <= 0 or w >= sum(games[i]) for i, w in enumerate(wins)):
        raise ValueError("with prior 0 every system must have won and lost at least once")
    p = [1.0] * n
    for _ in range(max_iter):
        new = []
        for i in range(n):
            denom = sum(games[i][j] / (p[i] + p[j]) for j in range(n) if games[i][j])
            new.append(wins[i] / denom if denom else p[i])
        scale = math.exp(sum(math.log(v) for v in new) / n)
        new = [v / scale for v in new]
        done = max(abs(math.log(a) - math.log(b)) for a, b in zip(new, p, strict=True)) < tol
        p = new
        if done:
            break
    return {s: BASE + SCALE * math.log10(p[index[s]]) for s in systems}


@dataclass(frozen=True, slots=True)
class Rating:
    system: str
    rating: float
    low: float  # bootstrap percentile interval
    high: float
    battles: int
    wins: float  # ties count one half

    @property
    def win_rate(self) -> float:
        return self.wins / self.battles if self.battles else 0.0


def rate(
    by_question: Mapping[str, Sequence[Battle]],
    systems: Sequence[str],
    *,
    bootstrap: int = 1000,
    confidence: float = 0.95,
    seed: int = 0,
    prior: float = 0.5,
) -> list[Rating]:
    """Ratings with a percentile interval from ``bootstrap`` resamples of the questions
    (a question's battles stay together), best first."""
    questions = sorted(by_question)
    flat = [b for q in questions for b in by_question[q]]
    point = fit(flat, systems, prior=prior)
    rng = random.Random(seed)
    samples: dict[str, list[float]] = {s: [] for s in systems}
    for _ in range(bootstrap if questions else 0):
        drawn = [b for _ in questions for b in by_question[rng.choice(questions)]]
        for s, r in fit(drawn, systems, prior=prior).items():
            samples[s].append(r)
    tail = (1.0 - confidence) / 2
    out = []
    for s in systems:
        n = sum(1 for x, y, _ in flat if s in (x, y))
        won = sum(v if x == s else 1.0 - v for x, y, v in flat if s in (x, y))
        low, high = _percentiles(samples[s], tail) if samples[s] else (point[s], point[s])
        out.append(Rating(s, point[s], low, high, n, won))
    return sorted(out, key=lambda r: -r.rating)


def _percentiles(values: list[float], tail: float) -> tuple[float, float]:
    ordered = sorted(values)

    def at(q: float) -> float:  # linear interpolation, as numpy's default
        pos = q * (len(ordered) - 1)
        lo = math.floor(pos)
        hi = min(lo + 1, len(ordered) - 1)
        return ordered[lo] + (ordered[hi] - ordered[lo]) * (pos - lo)

    return at(tail), at(1.0 - tail)
