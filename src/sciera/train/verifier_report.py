"""The verifier's held-out reports, written into its card: the SciFact levels on claims
(oracle and open settings, the claim-level refusal table), the verdict head on gold
rationales, PubMedQA's held-out questions, and whether the dev claims are the shipped
reranker's dev queries."""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

import numpy as np

from sciera.train.verifier_data import NEI, VerifierData
from sciera.train.verifier_eval import (
    answer_questions,
    label_scores,
    oracle_rationale_verdicts,
    scifact_scores,
    verify_claims,
)
from sciera.train.verifier_policy import claim_table, open_candidates, relevance
from sciera.verify import calibration
from sciera.verify.base import VerdictInput
from sciera.verify.network import VerifierNetwork
from sciera.verify.trained import TrainedSelector, TrainedVerdict
from sciera.verify.verifier import VerifyPolicy


def evaluate_claims(
    net: VerifierNetwork, data: VerifierData, ids: Sequence[str], policy: VerifyPolicy, open_k: int
) -> dict[str, Any]:
    """SciFact metrics in the oracle (cited abstracts) and open (first-stage top ``open_k``)
    settings, the verdict head on gold rationales, and the claim-level refusal table."""
    if not ids:
        return {}
    selector, verdict = TrainedSelector(network=net), TrainedVerdict(network=net)
    out: dict[str, Any] = {"claims": len(ids)}
    oracle = verify_claims(selector, verdict, data, ids, policy=policy)
    out["oracle"] = {k: round(v, 4) for k, v in scifact_scores(data, ids, oracle).items()}
    if data.retrieved:
        cands = open_candidates(data, ids, open_k)
        rel = relevance(data)
        res = verify_claims(
            selector, verdict, data, ids, policy=policy, candidates=cands, relevance=rel
        )
        out["open"] = {k: round(v, 4) for k, v in scifact_scores(data, ids, res).items()}
        rows = [r for r in claim_table(data, ids, res) if r["strong"] == policy.strong]
        out["open_claims"] = rows[0] if rows else None
    probs, y = oracle_rationale_verdicts(verdict, data, ids)
    if len(y):
        s = label_scores(probs, y)
        out["oracle_rationale"] = {**s, "ece": calibration.top_label_ece(probs, y)}
    return out


def evaluate_pubmedqa(net: VerifierNetwork, data: VerifierData) -> dict[str, Any]:
    """Held-out PubMedQA questions: reasoning setting (own contexts) and the BioASQ-format
    proxy (yes/no questions, the long answer as the gold snippet, yes vs no)."""
    items = data.pubmedqa_held
    if not items:
        return {}
    selector, verdict = TrainedSelector(network=net), TrainedVerdict(network=net)
    y = [q.label for q in items]
    p = answer_questions(selector, verdict, items)
    majority = max(range(3), key=y.count)
    out = {
        "reasoning": label_scores(p, y),
        "reasoning_majority": label_scores(np.eye(3)[[majority] * len(y)], y),
    }
    yn = [q for q in items if q.label != NEI and q.long_answer]
    if yn:
        pb = np.asarray(
            [verdict.predict_many(q.question, [VerdictInput((q.long_answer,), "")])[0] for q in yn]
        )
        pb[:, 2] = 0.0  # yes/no only: SUPPORT vs CONTRADICT
        out["bioasq_proxy"] = label_scores(pb, [q.label for q in yn])
    return out


def same_dev_as_reranker(dev_ids: Sequence[str]) -> bool:
    """Whether the dev claims are among the shipped cross-encoder's (and embedder's) dev
    queries, which the first stage and the reranker never trained on (claims the guard
    refused leave both)."""
    from sciera.artifacts.card import read_card
    from sciera.artifacts.registry import CROSS_ENCODER, shipped_dir

    folder = shipped_dir(CROSS_ENCODER, "scifact-minilm")
    card = read_card(folder) if folder is not None else None
    theirs = (card or {}).get("data", {}).get("dev_qids") or []
    return bool(theirs) and bool(dev_ids) and set(dev_ids) <= set(theirs)
