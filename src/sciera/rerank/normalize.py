"""Score normalization for fusing rerankers whose scores live on different scales.

Every method maps a list of scores to [0, 1] with higher = better. A constant list
(including a single result) maps to 1.0 under every method: a lone candidate is the
best one in its list, and fusion must not zero it out.
"""

from __future__ import annotations

import math
from collections.abc import Callable, Sequence

import numpy as np


def minmax(scores: Sequence[float]) -> np.ndarray:
    x = np.asarray(scores, dtype=float)
    if x.size == 0:
        return x
    lo, hi = float(x.min()), float(x.max())
    if hi - lo <= 1e-12:
        return np.ones_like(x)
    return (x - lo) / (hi - lo)


def zscore(scores: Sequence[float]) -> np.ndarray:
    """Standard score squashed through the normal CDF: Φ((x - mean) / std)."""
    x = np.asarray(scores, dtype=float)
    if x.size == 0:
        return x
    std = float(x.std())
    if std <= 1e-12:
        return np.ones_like(x)
    z = (x - x.mean()) / std
    return np.array([0.5 * (1.0 + math.erf(v / math.sqrt(2.0))) for v in z])


def rank_based(scores: Sequence[float]) -> np.ndarray:
    """(n - r + 1) / n with r the 1-based competition rank (ties share the best rank)."""
    x = np.asarray(scores, dtype=float)
    n = x.size
    if n == 0:
        return x
    ranks = np.array([1.0 + float((x > v).sum()) for v in x])
    return (n - ranks + 1.0) / n


NORMALIZERS: dict[str, Callable[[Sequence[float]], np.ndarray]] = {
    "minmax": minmax,
    "zscore": zscore,
    "rank": rank_based,
}


def normalize(scores: Sequence[float], method: str) -> np.ndarray:
    try:
        fn = NORMALIZERS[method]
    except KeyError:
        known = sorted(NORMALIZERS)
        raise ValueError(f"unknown normalization {method!r}; choose one of {known}") from None
    return fn(scores)
