"""One evaluator object per task: hand-computed values, and training's dev metric equal to
``eval run``'s metric for the same predictions, computed through the same object."""

from __future__ import annotations

import math
from pathlib import Path

import numpy as np
import pytest
from scifact_worked_example import GOLD_52, PRED_52

from sciera.datasets.claims import parse_gold, parse_prediction
from sciera.eval import aggregate
from sciera.eval.evaluators import SCIFACT_MEAN, ClaimEvaluator, RankingEvaluator
from sciera.eval.runstore import Results
from sciera.train.ce_fit import dev_evaluator, dev_run, ranking_metrics
from sciera.train.data import TrainQuery
from sciera.train.splits import SplitGuard
from sciera.train.verifier_data import VerifierData
from sciera.train.verifier_eval import SELECT, VerifierEvaluator

QRELS = {"a": {"g": 1}, "b": {"g": 1, "h": 1}}
RUN = {"a": ["x", "g"], "b": ["g", "h"]}


def test_ranking_evaluator_by_hand():
    ev = RankingEvaluator(QRELS, ("ndcg@10", "hit@1", "mrr@10"))
    # a: gold second -> nDCG 1/log2(3), hit@1 0, RR 1/2; b: both gold first -> 1, 1, 1
    assert ev.score(RUN) == pytest.approx(
        {"ndcg@10": (1 / math.log2(3) + 1) / 2, "hit@1": 0.5, "mrr@10": 0.75}
    )
    assert ev.primary_metric == "ndcg@10"
    called = RankingEvaluator(QRELS, ("hit@1",), "hit@1", predict=lambda model: model[1])
    assert called(("not this", RUN)) == {"hit@1": 0.5}


def test_ranking_evaluator_errors_and_unscorable_metrics():
    with pytest.raises(TypeError, match="no predict function"):
        RankingEvaluator(QRELS)(RUN)
    with pytest.raises(ValueError, match="is a verification metric"):
        RankingEvaluator(QRELS, ("sentence_label_f1",))
    with pytest.raises(ValueError, match="no query can be scored"):
        RankingEvaluator(QRELS, ("hit@1", "cdr")).score(RUN)
    skipping = RankingEvaluator(QRELS, ("hit@1", "cdr"), skip_unscorable=True)
    assert skipping.score(RUN) == {"hit@1": 0.5}


def test_claim_evaluator_by_hand():
    ev = ClaimEvaluator([GOLD_52])
    m = ev.score([PRED_52])
    # abstracts: 11 of (11, 16) right of gold (11, 15) -> F1 1/2; sentences: 11 of 5
    # predicted, 4 gold -> F1 2/9
    assert m["abstract_label_only_f1"] == pytest.approx(1 / 2)
    assert m["sentence_label_f1"] == pytest.approx(2 / 9)
    assert m[SCIFACT_MEAN] == pytest.approx((1 / 2 + 2 / 9) / 2)
    assert ev.primary_metric == SCIFACT_MEAN == SELECT
    narrow = ClaimEvaluator([GOLD_52], ("Sentence_Label_F1",), predict=lambda model: model)
    assert narrow([parse_prediction(PRED_52)]) == pytest.approx({"sentence_label_f1": 2 / 9})
    assert ClaimEvaluator([GOLD_52]).score([])["abstract_label_only_recall"] == 0.0
    # a measure that is not one of SciFact's counts is computed from the predictions
    off = ClaimEvaluator([GOLD_52], ("abstract_off_evidence", "abstract_label_only_f1"))
    assert off.score([PRED_52]) == pytest.approx(
        {"abstract_off_evidence": 1 / 2, "abstract_label_only_f1": 1 / 2}
    )


def _results(metrics: list[str], dataset: dict, records: dict) -> aggregate.Results:
    manifest = {"experiment": {"metrics": metrics, "pipelines": [{"name": "p"}]}}
    return Results(Path("."), manifest, dataset, {"p": {0: records}})


def _spy(monkeypatch: pytest.MonkeyPatch, cls: type) -> list[tuple[object, dict]]:
    seen: list[tuple[object, dict]] = []
    score = cls.score

    def recorded(self, predictions):
        out = score(self, predictions)
        seen.append((self, out))
        return out

    monkeypatch.setattr(cls, "score", recorded)
    return seen


def test_training_dev_ranking_metric_is_eval_runs_through_the_same_evaluator(monkeypatch):
    seen = _spy(monkeypatch, RankingEvaluator)
    dev = [
        TrainQuery("a", "qa", (), (("x#0", 1.0), ("g#0", 1.0), ("y#1", 1.0)), frozenset("g")),
        TrainQuery("b", "qb", (), (("g#0", 1.0), ("h#0", 1.0), ("x#0", 1.0)), frozenset("gm")),
    ]
    scores = [np.array([0.1, 0.9, 0.0]), np.array([0.0, 0.0, 1.0])]
    trained = ranking_metrics(dev, scores)
    run = dev_run(dev, scores)
    records = {q: {"first": [[d, s] for d, s in docs.items()]} for q, docs in run.items()}
    dataset = {"queries": {"a": "qa", "b": "qb"}, "qrels": dev_evaluator(dev).qrels}
    table = aggregate.repeat_scores(
        _results(["ndcg@10", "hit@1"], dataset, records), records, ["a", "b"]
    )
    assert table["ndcg@10"] == trained["ndcg@10"] and table["hit@1"] == trained["hit@1"] == 0.5
    (train_ev, train_out), (eval_ev, eval_out) = seen
    assert train_ev.qrels == eval_ev.qrels and train_out == eval_out


def test_verifier_dev_metric_is_eval_runs_through_the_same_evaluator(monkeypatch):
    seen = _spy(monkeypatch, ClaimEvaluator)
    data = VerifierData(
        {}, {"52": parse_gold(GOLD_52)}, [], ["52"], [], {}, [], [], [], [], SplitGuard()
    )
    trained = VerifierEvaluator(data, ("52",)).score([parse_prediction(PRED_52)])
    records = {"52": {"first": [], "verification": PRED_52}}
    dataset = {"queries": {"52": GOLD_52["claim"]}, "qrels": {}, "claims": {"52": GOLD_52}}
    specs = ["abstract_label_only_f1", "sentence_label_f1"]
    table = aggregate.repeat_scores(_results(specs, dataset, records), records, ["52"])
    assert {s: table[s] for s in specs} == {s: trained[s] for s in specs}
    assert table["sentence_label_f1"] == pytest.approx(2 / 9)
    assert [type(ev) for ev, _ in seen] == [ClaimEvaluator, ClaimEvaluator]
