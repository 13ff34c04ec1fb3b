"""The verifier's evaluator: called with a network, it scores the claims it holds through
the inference code; its primary metric is the one that picks the training epoch (a
stand-in network that reads "yes" as a rationale supporting the claim)."""

from __future__ import annotations

import numpy as np

from sciera.datasets.claims import parse_gold
from sciera.train.splits import SplitGuard
from sciera.train.verifier_data import VerifierData
from sciera.train.verifier_eval import SELECT, VerifierEvaluator
from sciera.verify.base import AbstractText


class _Network:
    """Rationale logit 5 for a sentence saying "yes" (-5 otherwise); the verdict SUPPORT
    when the input says "yes", else NOT ENOUGH INFO."""

    context, sep = "none", " | "
    rationale_calibrator = verdict_calibrator = citer = None

    def logits(self, pairs, head):
        rows = []
        for pair in pairs:
            text = pair[1] if isinstance(pair, tuple | list) else str(pair)
            yes = "yes" in text.split(" | ")[0] if head == "rationale" else "yes" in text
            rows.append([5.0 if yes else -5.0, 4.0 if yes else 0.0, 0.0, 0.0 if yes else 4.0])
        return np.array(rows)


def _data(right: bool) -> VerifierData:
    abstracts = {
        f"d{i}": AbstractText(
            f"d{i}", "", ("yes it does.", "no idea.") if right else ("no.", "yes.")
        )
        for i in range(3)
    }
    gold = {
        str(i): parse_gold(
            {
                "id": i,
                "claim": "it does",
                "evidence": {f"d{i}": [{"sentences": [0], "label": "SUPPORT"}]},
                "cited_doc_ids": [f"d{i}"],
            }
        )
        for i in range(3)
    }
    return VerifierData(abstracts, gold, [], list(gold), [], {}, [], [], [], [], SplitGuard())


def test_the_evaluator_scores_a_network_on_its_claims_by_its_primary_metric():
    good = VerifierEvaluator(_data(right=True), ("0", "1", "2"))
    bad = VerifierEvaluator(_data(right=False), ("0", "1", "2"))
    assert good.primary_metric == SELECT == "scifact_mean_f1"
    m = good(_Network())
    assert m["abstract_label_only_f1"] == 1.0 and m["sentence_selection_f1"] == 1.0
    assert m[SELECT] == 1.0 > bad(_Network())[SELECT]
    assert m["oracle_rationale_accuracy"] == 1.0 and m["rationale_ap"] == 1.0
