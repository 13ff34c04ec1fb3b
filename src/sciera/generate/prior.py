"""Contextual calibration of a choice decision (Zhao et al., 2021, "Calibrate Before Use").

A small model answers "yes" to most yes/no questions whatever the evidence says. Its
probabilities over the options on *content-free* inputs (question and evidence "N/A",
"[MASK]" or empty) estimate that prior; dividing the probabilities for a real input by it
and renormalizing removes the bias without any labelled data. The prior is computed once
per (prompt, options) and reused.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence

# The paper's three content-free inputs; each fills both the question and the evidence.
CONTENT_FREE = ("N/A", "[MASK]", "")
# An option the model never gives on content-free input would be divided by ~0.
MIN_PRIOR = 1e-3


def average_prior(rows: Sequence[Mapping[str, float]], options: Sequence[str]) -> dict[str, float]:
    """The mean probability of each option over the content-free inputs, renormalized."""
    if not rows:
        raise ValueError("no content-free probabilities to average")
    mean = {o: sum(r.get(o, 0.0) for r in rows) / len(rows) for o in options}
    total = sum(mean.values())
    if total <= 0.0:
        return {o: 1.0 / len(options) for o in options}
    return {o: mean[o] / total for o in options}


def apply_prior(probs: Mapping[str, float], prior: Mapping[str, float]) -> dict[str, float]:
    """``probs / prior``, renormalized over the prior's options (unchanged if all zero)."""
    weighted = {o: probs.get(o, 0.0) / max(p, MIN_PRIOR) for o, p in prior.items()}
    total = sum(weighted.values())
    if total <= 0.0:
        return {o: probs.get(o, 0.0) for o in prior}
    return {o: w / total for o, w in weighted.items()}
