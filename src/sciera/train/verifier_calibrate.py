"""The calibrate stage of a verifier run: on the dev claims, a Platt calibrator for
P(rationale) (and for the citer's, with one), a temperature calibrator for the verdict,
then the decision policy (:mod:`sciera.train.verifier_policy`: the rationale threshold,
fallback and minimum label confidence by the best mean of abstract label-only F1 and
sentence selection+label F1 in the open setting, then ``min_cited``, ``min_quoted`` and
``strong``)."""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import asdict, dataclass, replace
from itertools import product
from typing import TYPE_CHECKING, Any

import numpy as np

from sciera.eval.metrics.ranking import scored_average_precision
from sciera.train.verifier_data import NEI, VerifierData
from sciera.train.verifier_eval import SELECT, scifact_scores, verify_claims
from sciera.train.verifier_job import Progress
from sciera.train.verifier_policy import (
    GRID,
    choose_cited,
    choose_quoted,
    choose_strong,
    claim_table,
    open_candidates,
    policy_runs,
    relevance,
    union_candidates,
)
from sciera.types import VERDICT_LABELS
from sciera.verify import calibration
from sciera.verify.base import AbstractText, VerdictInput, VerdictModel
from sciera.verify.memo import MemoSelector, MemoVerdict
from sciera.verify.network import VerifierNetwork
from sciera.verify.trained import TrainedSelector, TrainedVerdict
from sciera.verify.verifier import VerifyPolicy, pick_rationales

if TYPE_CHECKING:
    from sciera.verify.citer import Citer

OPEN_RERANKED = (
    "the shipped cross-encoder's top abstracts of the hybrid first stage's 30 (Max-P), with "
    "its P(relevant) for the relevance gate, as ask and verify read them"
)
OPEN_FIRST_STAGE = "the first stage's top abstracts (no relevance known: no gate)"
BASE_POLICY = VerifyPolicy(min_rationale=0.5, max_rationales=3, fallback=2)


@dataclass(frozen=True)
class DevSentences:
    """Every sentence of the dev candidates, read once: per claim its text and abstracts,
    per abstract the rationale head's logits and the gold labels (1: a rationale)."""

    claims: list[tuple[str, str, list[AbstractText]]]  # (id, text, abstracts)
    logits: list[list[np.ndarray]]  # per claim, per abstract
    labels: list[list[np.ndarray]]

    @property
    def x(self) -> np.ndarray:
        return np.concatenate([x for per in self.logits for x in per])

    @property
    def y(self) -> np.ndarray:
        return np.concatenate([y for per in self.labels for y in per]).astype(int)


def dev_sentences(
    net: VerifierNetwork | None, data: VerifierData, candidates: Mapping[str, Sequence[str]]
) -> DevSentences:
    """The sentences of ``candidates`` (claim id -> doc ids) with their gold labels and, with
    ``net``, its rationale head's logits (none without)."""
    selector = TrainedSelector(network=net) if net is not None else None
    claims, logits, labels = [], [], []
    for cid, docs in candidates.items():
        c = data.claims[cid]
        abstracts = [data.abstracts[d] for d in docs]
        claims.append((cid, c.claim, abstracts))
        if selector is not None:
            head = selector.logits(c.claim, abstracts)
            logits.append([np.asarray(x, dtype=float) for x in head])
        labels.append([np.array(c.rationale_labels(a.doc_id, len(a.sentences))) for a in abstracts])
    return DevSentences(claims, logits, labels)


def fit_rationale_calibrator(
    sentences: DevSentences,
) -> tuple[calibration.PlattScaling, dict[str, float]]:
    """Platt scaling of the rationale logit on every sentence of the dev candidates."""
    return fit_platt(sentences.x, sentences.y)


def fit_platt(x: np.ndarray, y: np.ndarray) -> tuple[calibration.PlattScaling, dict[str, Any]]:
    """Platt scaling of logits ``x`` on 0/1 labels ``y``, with the counts and ECE before
    and after."""
    cal = calibration.PlattScaling.fit(x, y)
    stats = {
        "sentences": len(y),
        "rationales": int(y.sum()),
        "ece_sigmoid": calibration.binary_ece(calibration.sigmoid(x), y),
        "ece": calibration.binary_ece(cal(x), y),
    }
    return cal, stats


def _verdict_rows(
    net: VerifierNetwork,
    data: VerifierData,
    candidates: Mapping[str, Sequence[str]],
    policy: VerifyPolicy,
) -> tuple[np.ndarray, np.ndarray]:
    """(verdict logits, labels) of the verdict inputs ``policy`` picks on the dev
    candidates: the gold label for an evidence abstract, NOT ENOUGH INFO otherwise."""
    selector, verdict = TrainedSelector(network=net), TrainedVerdict(network=net)
    zs, ys = [], []
    for cid, docs in candidates.items():
        c = data.claims[cid]
        abstracts = [data.abstracts[d] for d in docs]
        inputs, labels = [], []
        for a, s in zip(abstracts, selector.score_many(c.claim, abstracts), strict=True):
            idx, _ = pick_rationales(s, policy)
            if not idx:
                continue
            inputs.append(VerdictInput(tuple(a.sentences[i] for i in idx), a.title))
            g = c.evidence.get(a.doc_id)
            labels.append(VERDICT_LABELS.index(g.label) if g else NEI)
        if inputs:
            zs.append(verdict.logits(c.claim, inputs))
            ys += labels
    return np.vstack(zs) if zs else np.zeros((0, 3)), np.asarray(ys, dtype=int)


@dataclass
class Chosen:
    policy: VerifyPolicy
    rationale: calibration.PlattScaling
    verdict: calibration.TemperatureScaling
    report: dict[str, Any]
    citer: calibration.PlattScaling | None = None


def fit_citer_calibrator(
    citer: Citer, sentences: DevSentences
) -> tuple[calibration.PlattScaling, dict[str, Any]]:
    """Platt scaling of ``citer``'s logit on every sentence of the dev candidates (those
    the rationale head's calibrator was fitted on), with its ranking of them beside the
    head's (when ``sentences`` carries the head's logits)."""
    xs = [x for _, text, abstracts in sentences.claims for x in citer.logits(text, abstracts)]
    x, y = np.concatenate(xs), sentences.y
    cal, stats = fit_platt(x, y)
    if sentences.logits:
        stats["average_precision_head"] = round(scored_average_precision(sentences.x, y), 4)
    stats["average_precision_citer"] = round(scored_average_precision(x, y), 4)
    return cal, stats


@dataclass(frozen=True)
class _Calibrated:
    """What :func:`fit_calibrators` fits on the dev sentences, with its reports."""

    rationale: calibration.PlattScaling
    verdict: calibration.TemperatureScaling
    report: dict[str, Any]
    citer: calibration.PlattScaling | None = None


def fit_calibrators(
    net: VerifierNetwork,
    data: VerifierData,
    candidates: Mapping[str, Sequence[str]],
    bias: bool = False,
) -> _Calibrated:
    """Fit the rationale head's (and the citer's) Platt calibrator on every sentence of the
    dev ``candidates`` and the verdict's temperature on what :data:`BASE_POLICY` reads; each
    is set on ``net`` as it is fitted."""
    sentences = dev_sentences(net, data, candidates)
    rat_cal, rat_stats = fit_rationale_calibrator(sentences)
    net.rationale_calibrator = rat_cal
    cit_cal, cit_stats = None, {}
    if net.citer is not None:
        cit_cal, cit_stats = fit_citer_calibrator(net.citer, sentences)
        net.citer.calibrator = cit_cal
    z, y = _verdict_rows(net, data, candidates, BASE_POLICY)
    temp = calibration.TemperatureScaling.fit(z, y, bias=bias)
    net.verdict_calibrator = temp
    ver_stats = {
        "inputs": len(y),
        "labels": {VERDICT_LABELS[k]: int((y == k).sum()) for k in range(3)},
        "ece_softmax": calibration.top_label_ece(calibration.softmax(z), y),
        "ece": calibration.top_label_ece(temp(z), y),
        "accuracy": float((temp(z).argmax(1) == y).mean()) if len(y) else 0.0,
    }
    report = {
        "rationale_calibration": rat_stats,
        **({"citer_calibration": cit_stats} if cit_stats else {}),
        "verdict_calibration": ver_stats,
    }
    return _Calibrated(rat_cal, temp, report, cit_cal)


def _choose_policy(
    net: VerifierNetwork,
    data: VerifierData,
    verdict: VerdictModel,
    open_: Mapping[str, Sequence[str]],
    min_relevance: float,
) -> tuple[VerifyPolicy, list[dict[str, Any]]]:
    """Every policy of :data:`GRID` (the relevance gate fixed), scored on dev with the
    head's calibrated P(rationale): the one with the best :data:`SELECT` (ties: the best
    abstract label-only F1) and the trials."""
    dev, rel = data.dev_ids, relevance(data)
    selector = MemoSelector(TrainedSelector(network=net))
    trials = []
    for mr, fb, mc in product(GRID["min_rationale"], GRID["fallback"], GRID["min_confidence"]):
        policy = VerifyPolicy(
            min_rationale=mr, fallback=fb, min_confidence=mc, min_relevance=min_relevance
        )
        res = verify_claims(
            selector, verdict, data, dev, policy=policy, candidates=open_, relevance=rel
        )
        m = scifact_scores(data, dev, res)
        trials.append({"policy": asdict(policy), **{k: round(v, 4) for k, v in m.items()}})
    best = max(trials, key=lambda t: (t[SELECT], t["abstract_label_only_f1"]))
    return VerifyPolicy(**best["policy"]), trials


def calibrate_and_choose(
    net: VerifierNetwork,
    data: VerifierData,
    open_k: int,
    progress: Progress | None = None,
    bias: bool = False,
    min_relevance: float = 0.0,
) -> Chosen:
    """Fit both calibrators on the dev claims, then choose the policy (with the relevance
    gate ``min_relevance`` fixed, not chosen), which sentences it cites (``min_cited``,
    :data:`~sciera.train.verifier_policy.CITE_GRID`, the reading rule kept; a tie keeps
    citing what is read), with a citer which it quotes, and ``strong``."""
    dev = data.dev_ids
    rel = relevance(data)
    open_ = open_candidates(data, dev, open_k)
    if progress:
        progress("calibrating on dev", 0, 3)
    cal = fit_calibrators(net, data, union_candidates(data, dev, open_k), bias)
    if progress:
        progress("calibrating on dev", 1, 3)
    verdict = MemoVerdict(TrainedVerdict(network=net))
    policy, trials = _choose_policy(net, data, verdict, open_, min_relevance)
    if progress:
        progress("calibrating on dev", 2, 3)
    # which sentences it cites (min_cited, the reading rule kept), then strong
    selector = MemoSelector(TrainedSelector(network=net))
    run = policy_runs(selector, verdict, data, dev, open_, rel)
    policy, cite_trials = choose_cited(
        policy, dev, lambda p, ids: scifact_scores(data, ids, run(p))
    )
    quote_trials: list[dict[str, Any]] = []
    if net.citer is not None:  # then which sentences the citer quotes
        policy, quote_trials = choose_quoted(
            policy, dev, lambda p, ids: scifact_scores(data, ids, run(p))
        )
    table = claim_table(data, dev, run(policy))
    policy = replace(policy, strong=choose_strong(table))
    if progress:
        progress("calibrating on dev", 3, 3)
    report = {
        "rationale_calibration": cal.report["rationale_calibration"],
        **({"citer_calibration": cal.report["citer_calibration"]} if cal.citer else {}),
        "verdict_calibration": cal.report["verdict_calibration"],
        "policy_trials": sorted(trials, key=lambda t: -t[SELECT])[:10],
        "cite_trials": cite_trials,
        **({"quote_trials": quote_trials} if quote_trials else {}),
        "strong_table": table,
        "open_k": open_k,
        "open_candidates": OPEN_RERANKED if data.reranked else OPEN_FIRST_STAGE,
    }
    return Chosen(policy, cal.rationale, cal.verdict, report, cal.citer)
