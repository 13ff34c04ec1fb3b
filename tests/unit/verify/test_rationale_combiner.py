"""The rationale selector with the relevance model's sentence logits (a stand-in here):
the features it reads, the combiner it applies, and average precision as training reports it."""

from __future__ import annotations

import numpy as np
import pytest

from sciera.eval.metrics.ranking import scored_average_precision as average_precision
from sciera.verify import trained
from sciera.verify.base import AbstractText
from sciera.verify.calibration import FeatureLogistic, PlattScaling


def test_features_are_both_logits_and_their_gaps_to_the_abstracts_best():
    x = trained.rationale_features(np.array([1.0, 3.0]), np.array([-2.0, -5.0]))
    np.testing.assert_allclose(x, [[1.0, -2.0, -2.0, 0.0], [3.0, -5.0, 0.0, -3.0]])
    assert trained.rationale_features(np.array([]), np.array([])).shape == (0, 4)


def test_average_precision_by_hand():
    assert average_precision(np.array([0.9, 0.8, 0.7, 0.1]), np.array([1, 0, 1, 0])) == (
        pytest.approx((1 + 2 / 3) / 2)
    )
    assert average_precision(np.array([0.5]), np.array([0])) == 0.0


class _Network:
    """The rationale head's logits without a model: one per sentence, its index."""

    context, sep = "none", "[SEP]"

    def __init__(self, combiner=None) -> None:
        self.rationale_calibrator = PlattScaling()
        self.rationale_combiner = combiner

    def logits(self, pairs, head):
        return np.array([[float(i), 0, 0, 0] for i in range(len(pairs))])


class _Relevance:
    def __init__(self) -> None:
        self.calls = 0

    def logits(self, claim, abstracts):
        self.calls += 1
        return [
            np.array([10.0 if "aspirin" in s else -10.0 for s in a.sentences]) for a in abstracts
        ]


def test_the_selector_reads_the_relevance_model_only_with_a_combiner(monkeypatch):
    relevance = _Relevance()
    monkeypatch.setattr(trained, "sentence_relevance", lambda: relevance)
    abstract = AbstractText("d", "", ("aspirin helps.", "unrelated.", "more unrelated."))
    # the combiner trusts relevance alone: the aspirin sentence wins over the head's favourite
    only_relevance = FeatureLogistic((0.0, 1.0, 0.0, 0.0), 0.0, trained.RATIONALE_FEATURES)
    selector = trained.TrainedSelector(network=_Network(only_relevance))
    scores = selector.score_many("Does aspirin help?", [abstract])[0]
    assert scores[0] > 0.99 and max(scores[1:]) < 0.01 and relevance.calls == 1
    plain = trained.TrainedSelector(network=_Network()).score_many("q", [abstract])[0]
    assert plain == pytest.approx([0.5, 1 / (1 + np.exp(-1)), 1 / (1 + np.exp(-2))])
    assert relevance.calls == 1  # not read without a combiner


def test_the_dev_sentences_read_feed_the_calibrator_and_the_combiner(monkeypatch):
    from sciera.datasets.claims import parse_gold
    from sciera.train.splits import SplitGuard
    from sciera.train.verifier_calibrate import (
        dev_sentences,
        fit_rationale_calibrator,
        fit_rationale_combiner,
    )
    from sciera.train.verifier_data import VerifierData

    abstracts = {
        f"d{i}": AbstractText(f"d{i}", "", ("aspirin helps.", "unrelated.", "aspirin again."))
        for i in range(10)
    }
    gold = {
        str(i): parse_gold(
            {
                "id": i,
                "claim": "Aspirin helps.",
                "evidence": {f"d{i}": [{"sentences": [i % 3], "label": "SUPPORT"}]},
                "cited_doc_ids": [f"d{i}"],
            }
        )
        for i in range(10)
    }
    data = VerifierData(abstracts, gold, [], list(gold), [], {}, [], [], [], [], SplitGuard())
    relevance = _Relevance()
    monkeypatch.setattr(trained, "sentence_relevance", lambda: relevance)
    monkeypatch.setattr("sciera.train.verifier_calibrate.sentence_relevance", lambda: relevance)
    read = dev_sentences(_Network(), data, {cid: [f"d{cid}"] for cid in gold})
    assert len(read.y) == 30 and read.y.sum() == 10
    np.testing.assert_allclose(read.x[:3], [0.0, 1.0, 2.0])  # the stand-in head: the index
    labels_only = dev_sentences(None, data, {cid: [f"d{cid}"] for cid in gold})
    assert labels_only.logits == [] and (labels_only.y == read.y).all()
    assert labels_only.claims == read.claims
    _, stats = fit_rationale_calibrator(read)
    assert stats["sentences"] == 30 and stats["rationales"] == 10
    combiner, report = fit_rationale_combiner(read)
    assert combiner.inputs == trained.RATIONALE_FEATURES and relevance.calls == 10
    assert report["sentences"] == 30 and 0.0 < report["average_precision_head"] <= 1.0
