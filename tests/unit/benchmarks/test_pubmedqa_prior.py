"""Offline re-decision of PubMedQA answers with a content-free prior."""

from __future__ import annotations

import pytest

SCRIPT = "pubmedqa_prior"


def test_redecide_divides_by_the_prior_and_keeps_refusals(bench):
    rows = [
        {"pred": "yes", "probs": {"yes": 0.5, "no": 0.3, "maybe": 0.2}},
        {"pred": "refused", "probs": {}},
    ]
    prior = {"yes": 0.8, "no": 0.1, "maybe": 0.1}
    assert bench.redecide(rows, prior) == ["no", "refused"]
    assert bench.redecide(rows, {"yes": 1 / 3, "no": 1 / 3, "maybe": 1 / 3}) == ["yes", "refused"]


def test_scores(bench):
    s = bench.scores(["yes", "no", "maybe"], ["yes", "yes", "refused"])
    assert s["accuracy"] == pytest.approx(1 / 3)
    assert 0.0 < s["macro_f1"] < 1.0
