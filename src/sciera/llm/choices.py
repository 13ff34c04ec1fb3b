"""Turning a model's top next-token log-probabilities into a distribution over choices.

Shared by backends that can read logprobs: tokens are stripped of whitespace and
mapped to the choices exactly, or case-insensitively when no two choices differ
only by case; the probability of every token that maps to a choice is summed and
the result renormalized. Choices should be single tokens ("yes"/"no", "0".."9").
"""

from __future__ import annotations

import math
from collections.abc import Iterable, Sequence


def choice_distribution(
    top: Iterable[tuple[str, float]], choices: Sequence[str]
) -> tuple[dict[str, float], float]:
    """(normalized probabilities, raw mass the choices had); all zeros when mass is 0."""
    exact = {c.strip(): c for c in choices}
    folded: dict[str, list[str]] = {}
    for c in choices:
        folded.setdefault(c.strip().casefold(), []).append(c)
    best: dict[str, float] = {}  # each distinct token once, at its highest logprob
    for token, logprob in top:
        if logprob is not None and math.isfinite(logprob):
            best[token] = max(best.get(token, -math.inf), logprob)
    raw = dict.fromkeys(choices, 0.0)
    for token, logprob in best.items():
        key = token.strip()
        choice = exact.get(key)
        if choice is None and len(folded.get(key.casefold(), [])) == 1:
            choice = folded[key.casefold()][0]
        if choice is not None:
            raw[choice] += math.exp(logprob)
    mass = sum(raw.values())
    return ({c: p / mass for c, p in raw.items()} if mass > 0 else raw), mass


def one_hot(answer: str | None, choices: Sequence[str]) -> dict[str, float]:
    """1.0 on ``answer`` (if it is a choice), 0.0 elsewhere -- an uncalibrated distribution."""
    return {c: float(c == answer) for c in choices}
