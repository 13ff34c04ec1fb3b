"""Paired significance tests: is system B's score on the *same* queries different from A's?

Small evaluation subsets (100 claims, 100 questions) move by several queries between
samples, so a difference is reported with its p-value, not alone:

- :func:`mcnemar_exact` for a per-query 0/1 outcome (hit@1, a correct yes/no answer):
  the exact two-sided binomial test on the discordant pairs (queries where exactly one
  system is right), with no normal approximation, so it holds for a handful of them.
- :func:`paired_randomization` for a per-query real score (nDCG@10, token F1):
  Fisher's sign-flip randomization test of the mean difference (Smucker, Allan and
  Carterette 2007 recommend it for IR), exact by enumeration when ``2**n`` sign
  patterns fit in ``n_resamples``, else Monte Carlo with a seed, counting the observed
  pattern (``(hits + 1) / (resamples + 1)``) so a p-value is never 0.

- :func:`f1_randomization` for a corpus-level F1 (SciFact's claim-verification scores),
  which is no mean of per-query values: each query's ``(correct, predicted, gold)`` counts
  are swapped between the two systems with probability 1/2 and F1 recomputed from the sums.

All are two-sided and take the scores in query order; pairs must line up.
"""

from __future__ import annotations

import itertools
import math
from collections.abc import Sequence
from dataclasses import dataclass

import numpy as np


@dataclass(frozen=True)
class PairedTest:
    """Outcome of a paired test of B against A over ``n`` queries.

    ``mean_diff`` is mean(B) - mean(A); for McNemar, ``b_only`` / ``a_only`` count the
    queries only B / only A got right. ``exact`` says whether ``p_value`` is exact or a
    Monte Carlo estimate.
    """

    test: str
    n: int
    mean_diff: float
    p_value: float
    exact: bool
    b_only: int | None = None
    a_only: int | None = None

    def as_dict(self) -> dict[str, object]:
        out: dict[str, object] = {
            "test": self.test,
            "n": self.n,
            "mean_diff": round(self.mean_diff, 6),
            "p_value": float(f"{self.p_value:.4g}"),  # 4 significant digits: 1e-17 stays
            "exact": self.exact,
        }
        if self.b_only is not None:
            out.update(b_only=self.b_only, a_only=self.a_only)
        return out


def _paired(a: Sequence[float], b: Sequence[float]) -> tuple[np.ndarray, np.ndarray]:
    if len(a) != len(b):
        raise ValueError(f"paired tests need one score per query in both: {len(a)} vs {len(b)}")
    if not a:
        raise ValueError("paired tests need at least one query")
    xa, xb = np.asarray(a, dtype=float), np.asarray(b, dtype=float)
    if not (np.isfinite(xa).all() and np.isfinite(xb).all()):
        raise ValueError("paired tests need finite scores (found NaN or infinity)")
    return xa, xb


def mcnemar_exact(a_correct: Sequence[bool], b_correct: Sequence[bool]) -> PairedTest:
    """Exact McNemar test: two-sided binomial(d, 1/2) on the d discordant queries."""
    xa, xb = _paired([float(x) for x in a_correct], [float(x) for x in b_correct])
    if not np.isin(np.concatenate([xa, xb]), (0.0, 1.0)).all():
        raise ValueError("McNemar's test takes 0/1 (wrong/right) outcomes per query")
    b_only = int(np.sum((xb == 1) & (xa == 0)))
    a_only = int(np.sum((xa == 1) & (xb == 0)))
    d, k = b_only + a_only, min(b_only, a_only)
    # P(X <= k) + P(X >= d - k) for X ~ Bin(d, 1/2), capped at 1 (k = d/2 counts once)
    tail = sum(math.comb(d, i) for i in range(k + 1)) / 2.0**d
    p = min(1.0, 2.0 * tail) if d else 1.0
    return PairedTest("mcnemar_exact", len(xa), float(np.mean(xb - xa)), p, True, b_only, a_only)


def paired_randomization(
    a: Sequence[float], b: Sequence[float], n_resamples: int = 100_000, seed: int = 0
) -> PairedTest:
    """Fisher's paired randomization (sign-flip) test of mean(B) - mean(A)."""
    if n_resamples < 1:
        raise ValueError(f"n_resamples must be >= 1, got {n_resamples}")
    xa, xb = _paired(a, b)
    diff = xb - xa
    observed = abs(diff.mean())
    tol = 1e-12 * max(1.0, observed)  # ties with the observed mean count as extreme
    nonzero = diff[diff != 0]  # a zero difference flips to itself
    n = len(diff)
    if len(nonzero) == 0:
        return PairedTest("paired_randomization", n, 0.0, 1.0, True)
    if 2 ** len(nonzero) <= n_resamples:
        signs = np.array(list(itertools.product((1.0, -1.0), repeat=len(nonzero))))
        means = np.abs(signs @ nonzero) / n
        p = float(np.mean(means >= observed - tol))
        return PairedTest("paired_randomization", n, float(diff.mean()), p, True)
    rng = np.random.default_rng(seed)
    hits = 0
    for start in range(0, n_resamples, 10_000):
        size = min(10_000, n_resamples - start)
        signs = rng.choice((1.0, -1.0), size=(size, len(nonzero)))
        hits += int(np.sum(np.abs(signs @ nonzero) / n >= observed - tol))
    p = (hits + 1) / (n_resamples + 1)
    return PairedTest("paired_randomization", n, float(diff.mean()), p, False)


def _f1(rows: np.ndarray) -> np.ndarray:
    c, p, g = rows[..., 0], rows[..., 1], rows[..., 2]
    return np.where(p + g > 0, 2 * c / np.maximum(p + g, 1e-12), 0.0)


def f1_randomization(
    a: Sequence[tuple[int, int, int]],
    b: Sequence[tuple[int, int, int]],
    n_resamples: int = 10_000,
    seed: int = 0,
) -> PairedTest:
    """Paired approximate randomization of F1(B) - F1(A) over queries: each query's
    ``(correct, predicted, gold)`` counts of A and B swapped with probability 1/2; p = share
    of resamples with |difference| >= the observed one, ``(hits + 1) / (resamples + 1)``.
    ``mean_diff`` is the difference of the two corpus F1s."""
    xa, xb = np.asarray(a, dtype=float), np.asarray(b, dtype=float)
    if xa.shape != xb.shape or xa.ndim != 2 or xa.shape[1] != 3:
        raise ValueError("two equally long lists of (correct, predicted, gold) per query")
    if not len(xa):
        raise ValueError("paired tests need at least one query")
    observed = float(_f1(xb.sum(0)) - _f1(xa.sum(0)))
    rng = np.random.default_rng(seed)
    hits = 0
    for start in range(0, n_resamples, 2000):
        size = min(2000, n_resamples - start)
        swap = rng.random((size, len(xa), 1)) < 0.5
        sa = np.where(swap, xb, xa).sum(1)
        sb = np.where(swap, xa, xb).sum(1)
        hits += int(np.sum(np.abs(_f1(sb) - _f1(sa)) >= abs(observed) - 1e-12))
    p = (hits + 1) / (n_resamples + 1)
    return PairedTest("f1_randomization", len(xa), observed, p, False)
