"""The trained rationale selector without a model (a stand-in network): P(rationale) from
the head's calibrated logit, the dev sentences training calibrates it on, average precision
as training reports it, and a model folder whose card lists the removed rationale combiner."""

from __future__ import annotations

import json
from pathlib import Path

import numpy as np
import pytest

from sciera.artifacts.files import CARD_FILE
from sciera.errors import ScieraError
from sciera.eval.metrics.ranking import scored_average_precision as average_precision
from sciera.verify import trained
from sciera.verify.base import AbstractText
from sciera.verify.calibration import PlattScaling
from sciera.verify.network import VerifierNetwork, check_calibrators


def test_average_precision_by_hand():
    assert average_precision(np.array([0.9, 0.8, 0.7, 0.1]), np.array([1, 0, 1, 0])) == (
        pytest.approx((1 + 2 / 3) / 2)
    )
    assert average_precision(np.array([0.5]), np.array([0])) == 0.0


class _Network:
    """The rationale head's logits without a model: one per sentence, its index."""

    context, sep = "none", "[SEP]"

    def __init__(self) -> None:
        self.rationale_calibrator = PlattScaling()

    def logits(self, pairs, head):
        return np.array([[float(i), 0, 0, 0] for i in range(len(pairs))])


def test_the_selector_scores_by_the_heads_calibrated_logit():
    abstract = AbstractText("d", "", ("aspirin helps.", "unrelated.", "more unrelated."))
    plain = trained.TrainedSelector(network=_Network()).score_many("q", [abstract])[0]
    assert plain == pytest.approx([0.5, 1 / (1 + np.exp(-1)), 1 / (1 + np.exp(-2))])


def test_the_dev_sentences_read_feed_the_calibrator():
    from sciera.datasets.claims import parse_gold
    from sciera.train.splits import SplitGuard
    from sciera.train.verifier_calibrate import dev_sentences, fit_rationale_calibrator
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
    read = dev_sentences(_Network(), data, {cid: [f"d{cid}"] for cid in gold})
    assert len(read.y) == 30 and read.y.sum() == 10
    np.testing.assert_allclose(read.x[:3], [0.0, 1.0, 2.0])  # the stand-in head: the index
    labels_only = dev_sentences(None, data, {cid: [f"d{cid}"] for cid in gold})
    assert labels_only.logits == [] and (labels_only.y == read.y).all()
    assert labels_only.claims == read.claims
    _, stats = fit_rationale_calibrator(read)
    assert stats["sentences"] == 30 and stats["rationales"] == 10


def test_a_card_listing_a_rationale_combiner_no_longer_loads(tmp_path: Path):
    card = {
        "inputs": {"context": "none"},
        "calibrators": {
            "rationale": "sciera-rationale-calibrator.json",
            "verdict": "sciera-verdict-calibrator.json",
            "rationale_combiner": "sciera-rationale-combiner.json",
        },
    }
    (tmp_path / CARD_FILE).write_text(json.dumps(card))
    # refused from the card alone, before the weights are read (the folder has none)
    with pytest.raises(ScieraError) as err:
        VerifierNetwork.load(tmp_path)
    message = str(err.value)
    assert "\n" not in message and str(tmp_path) in message
    assert "no longer reads a rationale combiner" in message
    assert "calibrate.rationale_relevance" in message
    del card["calibrators"]["rationale_combiner"]
    check_calibrators(tmp_path, card)  # the calibrators this version reads: no error
