"""Scoring a verifier on held-out claims and questions through the inference code.

Claims are verified with :func:`sciera.verify.verify_abstracts` (the trained selector and
verdict heads of a :class:`~sciera.verify.network.VerifierNetwork`) against their cited
abstracts (the *oracle* setting: evidence and cited abstracts given) plus, optionally, the
first ``retrieved`` first-stage abstracts, and scored with SciFact's metrics
(:mod:`sciera.eval.metrics.scifact`). PubMedQA questions are answered from their own
contexts (the reasoning setting): the selector's best sentences, then the verdict head.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, replace
from typing import Any

import numpy as np

from sciera.datasets.claims import AbstractPrediction, ClaimPrediction
from sciera.eval.evaluators import SCIFACT_MEAN, ClaimEvaluator
from sciera.train.verifier_data import NEI, PubMedQAItem, VerifierData
from sciera.types import NOT_ENOUGH_INFO, VERDICT_LABELS, Verification
from sciera.verify.base import AbstractText, RationaleSelector, VerdictInput, VerdictModel
from sciera.verify.network import VerifierNetwork
from sciera.verify.trained import TrainedSelector, TrainedVerdict
from sciera.verify.verifier import VerifyPolicy, verify_abstracts

SELECT = SCIFACT_MEAN
EPOCH_POLICY = VerifyPolicy(min_rationale=0.5, max_rationales=3, fallback=0)
QUESTION_POLICY = VerifyPolicy(min_rationale=0.5, max_rationales=3).for_question()


def to_prediction(claim_id: str, result: Verification) -> ClaimPrediction:
    """SciFact's prediction record: each non-NEI abstract with its rationale indices,
    best-scored first."""
    evidence = {}
    for v in result.verdicts:
        if v.label == NOT_ENOUGH_INFO:
            continue
        order = sorted(v.rationales, key=lambda r: -r.score)
        evidence[v.doc_id] = AbstractPrediction(v.label, tuple(r.index for r in order))
    return ClaimPrediction(claim_id, evidence)


def verify_claims(
    selector: RationaleSelector,
    verdict: VerdictModel,
    data: VerifierData,
    claim_ids: Sequence[str],
    *,
    retrieved: int = 0,
    policy: VerifyPolicy = EPOCH_POLICY,
    candidates: Mapping[str, Sequence[str]] | None = None,
    relevance: Mapping[str, Mapping[str, float]] | None = None,
    progress: Callable[[int, int], None] | None = None,
) -> dict[str, Verification]:
    """Each claim verified against its candidate abstracts: ``candidates[claim]`` when given,
    else its evidence and cited abstracts plus its first ``retrieved`` retrieved ones; an
    abstract in ``relevance[claim]`` carries that P(relevant) (the policy's gate).
    ``progress(done, total)`` after each claim."""
    out = {}
    for k, cid in enumerate(claim_ids, 1):
        docs = candidates[cid] if candidates is not None else data.candidates(cid, retrieved)
        rel = (relevance or {}).get(cid, {})
        abstracts = [
            replace(data.abstracts[d], relevance=rel.get(d)) for d in docs if d in data.abstracts
        ]
        out[cid] = verify_abstracts(data.claims[cid].claim, abstracts, selector, verdict, policy)
        if progress:
            progress(k, len(claim_ids))
    return out


def scifact_scores(
    data: VerifierData, claim_ids: Sequence[str], results: Mapping[str, Verification]
) -> dict[str, float]:
    """SciFact's metrics and :data:`SELECT` of the claims' verifications, by the claims'
    :class:`~sciera.eval.evaluators.ClaimEvaluator` (the one ``eval run`` scores with)."""
    preds = [to_prediction(c, results[c]) for c in claim_ids]
    return claim_evaluator(data, claim_ids).score(preds)


def claim_evaluator(data: VerifierData, claim_ids: Sequence[str]) -> ClaimEvaluator:
    return ClaimEvaluator([data.claims[c] for c in claim_ids])


def macro_f1(y: Sequence[int], pred: Sequence[int]) -> float:
    from sklearn.metrics import f1_score

    return float(f1_score(y, pred, labels=[0, 1, 2], average="macro", zero_division=0))


def oracle_rationale_verdicts(
    verdict: VerdictModel, data: VerifierData, claim_ids: Sequence[str]
) -> tuple[np.ndarray, np.ndarray]:
    """(probabilities, gold labels) of the verdict head on gold rationales: every evidence
    abstract of the claims with its rationale sentences (gold label)."""
    probs, labels = [], []
    for cid in claim_ids:
        c = data.claims[cid]
        inputs, ys = [], []
        for doc, g in c.evidence.items():
            a = data.abstracts[doc]
            idx = sorted(set().union(*g.rationales))
            inputs.append(VerdictInput(tuple(a.sentences[i] for i in idx), a.title))
            ys.append(VERDICT_LABELS.index(g.label))
        if inputs:
            probs += verdict.predict_many(c.claim, inputs)
            labels += ys
    return np.asarray(probs, dtype=float).reshape(-1, 3), np.asarray(labels, dtype=int)


def answer_questions(
    selector: RationaleSelector,
    verdict: VerdictModel,
    items: Sequence[PubMedQAItem],
    policy: VerifyPolicy = QUESTION_POLICY,
) -> np.ndarray:
    """Label probabilities for each question from its own contexts (reasoning setting)."""
    out = []
    for q in items:
        result = verify_abstracts(
            q.question, [AbstractText(q.id, "", q.sentences)], selector, verdict, policy
        )
        out.append(result.verdicts[0].probs)
    return np.asarray(out, dtype=float).reshape(-1, 3)


def label_scores(probs: np.ndarray, y: Sequence[int]) -> dict[str, float]:
    pred = probs.argmax(axis=1) if len(probs) else np.zeros(0, dtype=int)
    y = np.asarray(y, dtype=int)
    return {
        "accuracy": float((pred == y).mean()) if len(y) else 0.0,
        "macro_f1": macro_f1(y, pred),
        "n": len(y),
    }


def dev_metrics(
    net: VerifierNetwork, data: VerifierData, claim_ids: Sequence[str]
) -> dict[str, Any]:
    """The per-epoch dev report: SciFact metrics in the oracle setting (:data:`SELECT`
    picks the epoch), the verdict head on gold rationales, the selector's average precision
    and, when PubMedQA questions are held out, their accuracy and macro-F1."""
    from sklearn.metrics import average_precision_score

    selector, verdict = TrainedSelector(network=net), TrainedVerdict(network=net)
    results = verify_claims(selector, verdict, data, claim_ids)
    out: dict[str, Any] = {
        k: round(v, 4) for k, v in scifact_scores(data, claim_ids, results).items()
    }
    probs, y = oracle_rationale_verdicts(verdict, data, claim_ids)
    if len(y):
        s = label_scores(probs, y)
        out["oracle_rationale_accuracy"] = round(s["accuracy"], 4)
    scores, gold = [], []
    for cid in claim_ids:
        c = data.claims[cid]
        docs = data.candidates(cid)
        abstracts = [data.abstracts[d] for d in docs]
        for a, s in zip(abstracts, selector.score_many(c.claim, abstracts), strict=True):
            scores += s
            gold += c.rationale_labels(a.doc_id, len(s))
    if any(gold):
        out["rationale_ap"] = round(float(average_precision_score(gold, scores)), 4)
    if data.pubmedqa_held:
        p = answer_questions(selector, verdict, data.pubmedqa_held)
        s = label_scores(p, [q.label for q in data.pubmedqa_held])
        out["pubmedqa_accuracy"] = round(s["accuracy"], 4)
        out["pubmedqa_macro_f1"] = round(s["macro_f1"], 4)
    return out


@dataclass(frozen=True)
class VerifierEvaluator:
    """The verifier's evaluator on a set of claims, one object as sentence-transformers'
    ``SentenceEvaluator``: called with a network, it makes the claims' predictions through
    the inference code and returns :func:`dev_metrics`'s report; :meth:`score` scores
    predictions already made with the claims' :class:`~sciera.eval.evaluators.ClaimEvaluator`
    (as ``eval run`` does), and :attr:`primary_metric` (higher is better) picks the epoch."""

    data: VerifierData
    claim_ids: tuple[str, ...]
    primary_metric: str = SELECT

    def __call__(self, net: VerifierNetwork) -> dict[str, Any]:
        return dev_metrics(net, self.data, self.claim_ids)

    def score(self, predictions: Sequence[ClaimPrediction]) -> dict[str, float]:
        return claim_evaluator(self.data, self.claim_ids).score(predictions)


__all__ = [
    "NEI",
    "SELECT",
    "VerifierEvaluator",
    "claim_evaluator",
    "dev_metrics",
    "scifact_scores",
    "to_prediction",
    "verify_claims",
]
