"""The overall verdict from per-abstract verdicts (hand-made verdicts, no model)."""

from __future__ import annotations

import pytest

from sciera.types import CONFLICTING, CONTRADICT, NOT_ENOUGH_INFO, SUPPORT, AbstractVerdict
from sciera.verify.aggregate import aggregate


def _v(doc: str, label: str, p: float) -> AbstractVerdict:
    probs = {SUPPORT: (p, (1 - p) / 2, (1 - p) / 2), CONTRADICT: ((1 - p) / 2, p, (1 - p) / 2)}
    return AbstractVerdict(doc, "", label, p, probs.get(label, (0.1, 0.1, p)))


def test_one_strong_side_gives_that_side_with_its_strongest_confidence():
    out = aggregate(
        "c", [_v("a", SUPPORT, 0.6), _v("b", SUPPORT, 0.9), _v("c", NOT_ENOUGH_INFO, 0.8)]
    )
    assert (out.label, out.confidence, out.conflicting) == (SUPPORT, 0.9, False)
    assert out.supporting == ("b", "a") and out.contradicting == ()
    assert [v.doc_id for v in out.verdicts] == ["a", "b", "c"]  # input order kept


def test_strong_abstracts_on_both_sides_are_conflicting_and_named():
    out = aggregate(
        "c", [_v("a", SUPPORT, 0.9), _v("b", CONTRADICT, 0.7), _v("d", CONTRADICT, 0.4)]
    )
    assert out.label == CONFLICTING and out.conflicting
    assert out.supporting == ("a",) and out.contradicting == ("b",)  # d is below strong
    assert out.confidence == pytest.approx(0.7)


def test_weak_verdicts_give_not_enough_info_with_the_least_nei_probability():
    out = aggregate("c", [_v("a", SUPPORT, 0.45), _v("b", NOT_ENOUGH_INFO, 0.7)], strong=0.5)
    assert out.label == NOT_ENOUGH_INFO and not out.conflicting
    assert out.confidence == pytest.approx(0.275)  # a's P(NEI) = (1 - 0.45) / 2
    assert aggregate("c", [], strong=0.5).confidence == 1.0


def test_strong_threshold_moves_the_decision():
    verdicts = [_v("a", CONTRADICT, 0.55)]
    assert aggregate("c", verdicts, strong=0.5).label == CONTRADICT
    assert aggregate("c", verdicts, strong=0.6).label == NOT_ENOUGH_INFO
    with pytest.raises(ValueError):
        aggregate("c", verdicts, strong=1.5)


def test_an_abstract_the_gate_kept_out_is_as_sure_as_its_own_confidence():
    # never read by the verdict model: placeholder probabilities (0, 0, 1), confidence 1 - e
    gated = AbstractVerdict("a", "", NOT_ENOUGH_INFO, 0.86, (0.0, 0.0, 1.0))
    out = aggregate("c", [gated], strong=0.3)
    assert out.label == NOT_ENOUGH_INFO and out.confidence == pytest.approx(0.86)
    read = AbstractVerdict("b", "", NOT_ENOUGH_INFO, 0.6, (0.25, 0.15, 0.6))
    assert aggregate("c", [gated, read], strong=0.3).confidence == pytest.approx(0.6)
