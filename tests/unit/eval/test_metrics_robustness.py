"""NRS and CDR on hand-computed examples."""

from __future__ import annotations

import pytest

from sciera.eval.metrics import context_discrimination_rate, noise_robustness
from sciera.eval.metrics.robustness import discrimination_counts

DISTRACTORS = {"d1", "d2", "d3"}


def test_nrs_counts_non_distractors_in_top_k():
    ranked = ["g", "d1", "x", "d2", "y", "d3"]
    # top 5 = g, d1, x, d2, y -> 3 non-distractors / 5
    assert noise_robustness(ranked, DISTRACTORS) == pytest.approx(0.6)
    # top 2 = g, d1 -> 1 / 2
    assert noise_robustness(ranked, DISTRACTORS, k=2) == pytest.approx(0.5)
    assert noise_robustness(["g", "x"], DISTRACTORS, k=5) == 1.0  # short list: 2 / 2


def test_nrs_edge_cases():
    assert noise_robustness(["d1", "d2"], DISTRACTORS, k=5) == 0.0
    assert noise_robustness([], DISTRACTORS, k=5) == 0.0  # nothing returned, nothing useful
    with pytest.raises(ValueError):
        noise_robustness(["g"], DISTRACTORS, k=0)


def test_cdr_absent_passages_rank_below_everything():
    # pairs: (g, d1) lost (d1 first), (g, d2) won, (g, d3) won because d3 is absent
    assert context_discrimination_rate(["d1", "g", "d2"], {"g"}, DISTRACTORS) == pytest.approx(
        2 / 3
    )
    # gold absent: it is below every returned distractor, and ties with absent ones (lost)
    assert discrimination_counts(["d1"], {"g"}, DISTRACTORS) == (0, 3)


def test_cdr_two_golds():
    # g1 above d1 and d2 (2 wins); g2 below d1, above d2 (1 win) -> 3 / 4
    ranked = ["g1", "d1", "g2", "d2"]
    assert discrimination_counts(ranked, {"g1", "g2"}, {"d1", "d2"}) == (3, 4)
    assert context_discrimination_rate(ranked, {"g1", "g2"}, {"d1", "d2"}) == 0.75


def test_cdr_undefined_or_inconsistent_inputs_raise():
    with pytest.raises(ValueError, match="undefined"):
        context_discrimination_rate(["g"], {"g"}, set())
    with pytest.raises(ValueError, match="undefined"):
        context_discrimination_rate(["d1"], set(), DISTRACTORS)
    with pytest.raises(ValueError, match="both gold and distractor"):
        context_discrimination_rate(["g"], {"g"}, {"g"})
