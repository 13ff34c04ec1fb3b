"""calibrator_with_ssli: the per-question table of a calibrator's probabilities."""

from __future__ import annotations

import numpy as np
import pytest

SCRIPT = "calibrator_with_ssli"


def test_per_question_by_hand(bench):
    # q0: a distractor (0.9) above the gold (0.85), both kept at 0.8;
    # q1: the gold first (0.7) but nothing at 0.8 -> refused; q2: no gold among its
    # candidates, nothing kept -> not counted as refused (not answerable)
    p = np.array([0.9, 0.85, 0.1, 0.7, 0.2, 0.3])
    y = np.array([0, 1, 0, 1, 0, 0])
    qi = np.array([0, 0, 0, 1, 1, 2])
    dist = np.array([True, False, False, False, True, False])
    t = bench.per_question(p, y, qi, dist, range(3))
    assert t == {
        "questions": 3,
        "hit@1": pytest.approx(1 / 3),
        "distractor_first": 1,
        "refused@0.8": 1,
        "kept@0.8": 2,
        "precision@0.8": 0.5,
        "distractors_kept@0.8": 1,
    }
    only_q1 = bench.per_question(p, y, qi, dist, [1])
    assert only_q1["hit@1"] == 1.0 and only_q1["precision@0.8"] is None
