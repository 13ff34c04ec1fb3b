"""``sciera train verifier``: from SciFact claims (and PubMedQA questions, SSLI distractors)
to a verifier model folder with its card.

Steps: split guard -> dev split of whole claims (and a held-out CV fold when asked) ->
retrieved negatives (resumable) -> zero-shot sentence scores (resumable) ->
:func:`sciera.train.verifier_fit.fit_verifier` (resumable per epoch) -> on the dev claims:
a Platt calibrator for P(rationale), a temperature calibrator for the verdict, the decision
policy (rationale threshold, fallback, minimum label confidence: the best mean of abstract
label-only F1 and sentence selection+label F1 in the open setting) and the aggregate's
``strong`` threshold (the fewest refusals of answerable claims whose decisions keep
precision >= 0.70) -> the model folder with its card. Work files live in
``<model dir>.work/`` until the model is written, so rerunning the same command resumes.
"""

from __future__ import annotations

import hashlib
import json
import shlex
import shutil
import sys
import time
from collections.abc import Callable, Mapping, Sequence
from dataclasses import asdict, dataclass, field, replace
from itertools import product
from pathlib import Path
from typing import TYPE_CHECKING, Any

import numpy as np

from sciera.errors import ScieraError
from sciera.eval.metrics.ranking import scored_average_precision
from sciera.settings import Settings, load_settings
from sciera.train.citer_fit import CiterConfig, FittedCiter, fit_citer
from sciera.train.verifier_data import NEI, VerifierData, VerifierDataSpec, prepare_verifier
from sciera.train.verifier_eval import (
    SELECT,
    answer_questions,
    label_scores,
    oracle_rationale_verdicts,
    scifact_scores,
    verify_claims,
)
from sciera.train.verifier_fit import VerifierConfig, fit_verifier, load_for_training
from sciera.types import NOT_ENOUGH_INFO, VERDICT_LABELS, Verification
from sciera.verify import calibration
from sciera.verify.aggregate import aggregate
from sciera.verify.base import (
    AbstractText,
    RationaleSelector,
    VerdictInput,
    VerdictModel,
)
from sciera.verify.llm_verdict import COMBINER_FILES, CombinedVerdict
from sciera.verify.memo import MemoSelector, MemoVerdict
from sciera.verify.network import VerifierNetwork
from sciera.verify.trained import (
    RATIONALE_FEATURES,
    RELEVANCE_MODEL,
    TrainedSelector,
    TrainedVerdict,
    rationale_features,
    sentence_relevance,
)
from sciera.verify.verifier import VerifyPolicy, pick_rationales

if TYPE_CHECKING:
    from sciera.verify.citer import Citer

Progress = Callable[[str, int, int], None]
RATIONALE_CALIBRATOR = "sciera-rationale-calibrator.json"
RATIONALE_COMBINER = "sciera-rationale-combiner.json"
COMBINER_PER_LABEL = 100
"""The LLM combiners' training inputs per label and kind, unless told otherwise."""
VERDICT_CALIBRATOR = "sciera-verdict-calibrator.json"
CITER_PREFIX = "sciera-citer"
CITER_ADAPTERS = f"{CITER_PREFIX}.safetensors"  # an ensemble's others: sciera-citer-2, ...
CITER_CALIBRATOR = "sciera-citer-calibrator.json"
GRID = {
    "min_rationale": (0.3, 0.4, 0.5, 0.6, 0.7),
    "fallback": (0, 1, 2),
    "min_confidence": (0.0, 0.4, 0.5, 0.6, 0.7),
}
STRONG_GRID = tuple(round(0.3 + 0.05 * i, 2) for i in range(14))  # 0.3 .. 0.95
MIN_PRECISION = 0.70  # the bar for the decisions verify gives
# the combined verdict's gate: the evidence score's relevance weight and its threshold
WEIGHT_GRID = (0.25, 0.4, 0.5, 0.6, 0.75, 1.0)
GATE_GRID = tuple(round(0.3 + 0.05 * i, 2) for i in range(9))  # 0.3 .. 0.7
CITE_GRID: tuple[float | None, ...] = (None, 0.1, 0.15, 0.2, 0.25, 0.3, 0.4)
# the citer's P(rationale) a sentence needs to be quoted; None: quote as min_cited cites
QUOTE_GRID: tuple[float | None, ...] = (None, 0.1, 0.2, 0.3, 0.4, 0.5)
OPEN_RERANKED = (
    "the shipped cross-encoder's top abstracts of the hybrid first stage's 30 (Max-P), with "
    "its P(relevant) for the relevance gate, as ask and verify read them"
)
OPEN_FIRST_STAGE = "the first stage's top abstracts (no relevance known: no gate)"
BASE_POLICY = VerifyPolicy(min_rationale=0.5, max_rationales=3, fallback=2)


@dataclass(frozen=True)
class VerifierJob:
    """Everything ``sciera train verifier`` takes."""

    data: VerifierDataSpec
    out: str
    config: VerifierConfig = field(default_factory=VerifierConfig)
    open_k: int = 5  # first-stage abstracts per dev claim when choosing the policy
    fp16: bool = True
    overwrite: bool = False
    # torch threads (None: torch's default); how, not what: not in the run key. On a
    # shared, oversubscribed machine one thread trains faster than two.
    threads: int | None = None
    # the verdict calibrator: temperature alone (default) or with a bias per label (which
    # learns the dev pool's label prior: mostly NOT ENOUGH INFO among retrieved abstracts)
    verdict_bias: bool = False
    recalibrate: bool = False  # refit calibrators and policy of the trained model only
    # the relevance gate on the reranker's calibrated P(relevant): fixed, not chosen on dev
    # (0.5: an abstract more likely evidence than not); 0 turns it off
    min_relevance: float = 0.5
    # fit the LLM combiners (sciera.train.verifier_combiner) on training claims and questions
    combine_llm: bool = False
    # with combine_llm: training inputs per label and kind (None: COMBINER_PER_LABEL)
    combiner_per_label: int | None = None
    # with combine_llm: the LLM also asked each claim negated, read by the claim combiner
    # when it raises the cross-validated macro-F1 on the training rows
    negated_claim: bool = False
    # also fit the rationale combiner (head + relevance cross-encoder) and let the policy
    # search choose it: off by default, since with the combined verdict it measured worse
    rationale_relevance: bool = False
    # also train the citer (sciera.verify.citer: which sentences are quoted, scored apart
    # from the verdict) and choose min_quoted with it; not in the run key (the verifier's
    # epochs do not depend on it), so --recalibrate adds one to a trained verifier
    citer: CiterConfig | None = None
    # train the citer and add it to the verifier in ``out``, everything else kept
    add_citer: bool = False

    def __post_init__(self) -> None:
        if self.add_citer:
            if self.citer is None:
                raise ValueError("--add-citer trains the citer: give --citer-rank")
            if self.recalibrate or self.combine_llm:
                raise ValueError(
                    "--add-citer keeps the calibrators, the policy and the LLM combiners: "
                    "without --recalibrate and --combine-llm"
                )
        if self.negated_claim and not self.combine_llm:
            raise ValueError("--negated-claim is read by the LLM combiners: add --combine-llm")
        if self.combiner_per_label is not None:
            if not self.combine_llm:
                raise ValueError("--combiner-per-label sizes the LLM combiners: add --combine-llm")
            if self.combiner_per_label < 10:
                raise ValueError(
                    f"--combiner-per-label must be at least 10, got {self.combiner_per_label}"
                )

    @property
    def per_label(self) -> int:
        """The combiners' training inputs per label and kind."""
        return self.combiner_per_label or COMBINER_PER_LABEL


@dataclass(frozen=True)
class VerifierResult:
    model_dir: Path
    card: dict[str, Any]


LATER_DATA_OPTIONS = ("claim_negations",)


def run_key(job: VerifierJob) -> str:
    """What the epochs depend on (the time budget aside, so a run resumes with a larger
    one). Data options added since the first models are keyed only when set, so those
    models keep their key."""
    conf = {k: v for k, v in asdict(job.config).items() if k != "time_budget_minutes"}
    data = asdict(job.data)
    for name in LATER_DATA_OPTIONS:
        if not data[name]:
            del data[name]
    blob = json.dumps({"config": conf, "data": data}, sort_keys=True, default=str)
    return hashlib.sha256(blob.encode()).hexdigest()[:16]


# --- calibration and the decision policy -----------------------------------------------------


def _open_candidates(data: VerifierData, ids: Sequence[str], k: int) -> dict[str, list[str]]:
    """The open setting: the top ``k`` abstracts the pipeline reads (reranked) when known,
    else the first stage's."""
    if data.reranked:
        return {cid: [d for d, _ in data.reranked.get(cid, [])[:k]] for cid in ids}
    return {cid: data.retrieved.get(cid, [])[:k] for cid in ids}


def _relevance(data: VerifierData) -> dict[str, dict[str, float]]:
    return {cid: dict(rows) for cid, rows in data.reranked.items()}


def _union_candidates(data: VerifierData, ids: Sequence[str], k: int) -> dict[str, list[str]]:
    return {cid: data.candidates(cid, k) for cid in ids}


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


def claim_table(
    data: VerifierData, ids: Sequence[str], results: Mapping[str, Verification]
) -> list[dict[str, float]]:
    """For each ``strong`` of :data:`STRONG_GRID`: the share of answerable claims (with
    evidence) refused (NOT ENOUGH INFO) and the precision of the decisions given (SUPPORT,
    CONTRADICT or CONFLICTING matching the claim's gold label)."""
    rows = []
    for strong in STRONG_GRID:
        refused = answerable = decided = right = 0
        for cid in ids:
            gold = data.claims[cid].label
            gold = NOT_ENOUGH_INFO if gold == "NOT_ENOUGH_INFO" else gold
            v = results[cid]
            label = aggregate(v.claim, v.verdicts, strong).label
            if gold != NOT_ENOUGH_INFO:
                answerable += 1
                refused += label == NOT_ENOUGH_INFO
            if label != NOT_ENOUGH_INFO:
                decided += 1
                right += label == gold
        rows.append(
            {
                "strong": strong,
                "refusal_rate": refused / answerable if answerable else 0.0,
                "precision": right / decided if decided else 0.0,
                "decided": decided,
                "answerable": answerable,
            }
        )
    return rows


def choose_strong(rows: Sequence[Mapping[str, float]]) -> float:
    """The ``strong`` with the fewest refusals whose decisions keep precision >=
    :data:`MIN_PRECISION` (ties: the higher precision); else the most precise."""
    ok = [r for r in rows if r["precision"] >= MIN_PRECISION and r["decided"]]
    if ok:
        return float(min(ok, key=lambda r: (r["refusal_rate"], -r["precision"]))["strong"])
    return float(max(rows, key=lambda r: (r["precision"], -r["strong"]))["strong"])


def fit_rationale_combiner(
    sentences: DevSentences, folds: int = 5, seed: int = 0
) -> tuple[calibration.FeatureLogistic, dict[str, Any]]:
    """The rationale head's logit with the relevance cross-encoder's on (claim, sentence),
    each also as its gap to the abstract's best (:data:`RATIONALE_FEATURES`), through a
    logistic regression on every sentence of the dev candidates (as the Platt calibrator);
    its report: average precision of the head alone and of the combiner, cross-validated
    by claim."""
    from sciera.train.verifier_data import folds as make_folds

    relevance = sentence_relevance()
    xs, groups = [], []
    for (cid, text, abstracts), heads in zip(sentences.claims, sentences.logits, strict=True):
        for x, r in zip(heads, relevance.logits(text, abstracts), strict=True):
            xs.append(rationale_features(x, r))
            groups += [cid] * len(x)
    x, y = np.vstack(xs), sentences.y
    combiner = calibration.FeatureLogistic.fit(x, y, RATIONALE_FEATURES)
    cv = np.zeros(len(y))
    for fold in make_folds(groups, folds, seed):
        test = np.isin(groups, fold)
        cv[test] = calibration.FeatureLogistic.fit(x[~test], y[~test], RATIONALE_FEATURES)(x[test])
    stats = {
        "sentences": len(y),
        "rationales": int(y.sum()),
        "features": list(RATIONALE_FEATURES),
        "relevance_model": RELEVANCE_MODEL,
        "average_precision_head": round(scored_average_precision(x[:, 0], y), 4),
        "average_precision_cross_validated": round(scored_average_precision(cv, y), 4),
        "ece": calibration.binary_ece(combiner(x), y),
    }
    return combiner, stats


@dataclass
class Chosen:
    policy: VerifyPolicy
    rationale: calibration.PlattScaling
    verdict: calibration.TemperatureScaling
    report: dict[str, Any]
    rationale_combiner: calibration.FeatureLogistic | None = None
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


def policy_runs(
    selector: RationaleSelector,
    verdict: VerdictModel,
    data: VerifierData,
    ids: Sequence[str],
    candidates: Mapping[str, Sequence[str]],
    relevance: Mapping[str, Mapping[str, float]],
    progress: Progress | None = None,
    step: str = "verifying the dev claims",
) -> Callable[[VerifyPolicy], dict[str, Verification]]:
    """The claims ``ids`` verified under a policy (open setting), each policy run once;
    ``progress(step, claims done, claims)`` while one runs (the first run of an LLM verdict
    pays its calls)."""
    runs: dict[VerifyPolicy, dict[str, Verification]] = {}
    report = (lambda k, n: progress(step, k, n)) if progress else None

    def run(p: VerifyPolicy) -> dict[str, Verification]:
        if p not in runs:
            runs[p] = verify_claims(
                selector,
                verdict,
                data,
                ids,
                policy=p,
                candidates=candidates,
                relevance=relevance,
                progress=report,
            )
        return runs[p]

    return run


def choose_cited(
    policy: VerifyPolicy,
    ids: Sequence[str],
    score: Callable[[VerifyPolicy, Sequence[str]], Mapping[str, float]],
) -> tuple[VerifyPolicy, list[dict[str, Any]]]:
    """``policy`` with the ``min_cited`` of :data:`CITE_GRID` that ``score`` rates best on
    ``ids`` by :data:`SELECT` (a tie keeps the earlier value, first of all citing what is
    read), and the trials."""
    return _choose(policy, "min_cited", CITE_GRID, ids, score)


def choose_quoted(
    policy: VerifyPolicy,
    ids: Sequence[str],
    score: Callable[[VerifyPolicy, Sequence[str]], Mapping[str, float]],
) -> tuple[VerifyPolicy, list[dict[str, Any]]]:
    """``policy`` with the citer's ``min_quoted`` of :data:`QUOTE_GRID` that ``score`` rates
    best on ``ids`` by :data:`SELECT` (a tie keeps the earlier value, first of all quoting
    as without the citer), and the trials. What the verdict reads does not change with it,
    so neither do the labels: only which sentences are quoted."""
    return _choose(policy, "min_quoted", QUOTE_GRID, ids, score)


def _choose(
    policy: VerifyPolicy,
    name: str,
    grid: Sequence[float | None],
    ids: Sequence[str],
    score: Callable[[VerifyPolicy, Sequence[str]], Mapping[str, float]],
) -> tuple[VerifyPolicy, list[dict[str, Any]]]:
    options = [replace(policy, **{name: value}) for value in grid]
    scores = [score(p, ids) for p in options]
    i = max(range(len(options)), key=lambda k: (scores[k][SELECT], -k))
    trials = [
        {name: getattr(p, name), **{k: round(v, 4) for k, v in m.items()}}
        for p, m in zip(options, scores, strict=True)
    ]
    return options[i], trials


def calibrate_and_choose(
    net: VerifierNetwork,
    data: VerifierData,
    open_k: int,
    progress: Progress | None = None,
    bias: bool = False,
    min_relevance: float = 0.0,
    rationale_relevance: bool = False,
) -> Chosen:
    """Fit both calibrators on the dev claims, then choose the policy (with the relevance
    gate ``min_relevance`` fixed, not chosen), which sentences it cites (``min_cited``,
    :data:`CITE_GRID`, the reading rule kept; a tie keeps citing what is read) and
    ``strong``."""
    dev = data.dev_ids
    rel = _relevance(data)
    union = _union_candidates(data, dev, open_k)
    open_ = _open_candidates(data, dev, open_k)
    if progress:
        progress("calibrating on dev", 0, 3)
    sentences = dev_sentences(net, data, union)
    rat_cal, rat_stats = fit_rationale_calibrator(sentences)
    net.rationale_calibrator = rat_cal
    cit_cal, cit_stats = None, {}
    if net.citer is not None:
        cit_cal, cit_stats = fit_citer_calibrator(net.citer, sentences)
        net.citer.calibrator = cit_cal
    z, y = _verdict_rows(net, data, union, BASE_POLICY)
    temp = calibration.TemperatureScaling.fit(z, y, bias=bias)
    net.verdict_calibrator = temp
    ver_stats = {
        "inputs": len(y),
        "labels": {VERDICT_LABELS[k]: int((y == k).sum()) for k in range(3)},
        "ece_softmax": calibration.top_label_ece(calibration.softmax(z), y),
        "ece": calibration.top_label_ece(temp(z), y),
        "accuracy": float((temp(z).argmax(1) == y).mean()) if len(y) else 0.0,
    }
    if progress:
        progress("calibrating on dev", 1, 3)
    # the selector: the head's calibrated logit, or with the relevance model's (chosen here)
    variants: list[tuple[str, calibration.FeatureLogistic | None]] = [("head", None)]
    comb_stats: dict[str, Any] = {}
    if rationale_relevance:
        rat_comb, comb_stats = fit_rationale_combiner(sentences)
        variants.append(("head+relevance", rat_comb))
    verdict = MemoVerdict(TrainedVerdict(network=net))
    trials = []
    for selector_name, combiner in variants:
        net.rationale_combiner = combiner
        selector = MemoSelector(TrainedSelector(network=net))
        for mr, fb, mc in product(GRID["min_rationale"], GRID["fallback"], GRID["min_confidence"]):
            policy = VerifyPolicy(
                min_rationale=mr, fallback=fb, min_confidence=mc, min_relevance=min_relevance
            )
            res = verify_claims(
                selector, verdict, data, dev, policy=policy, candidates=open_, relevance=rel
            )
            m = scifact_scores(data, dev, res)
            trials.append(
                {
                    "selector": selector_name,
                    "policy": asdict(policy),
                    **{k: round(v, 4) for k, v in m.items()},
                }
            )
    best = max(trials, key=lambda t: (t[SELECT], t["abstract_label_only_f1"]))
    policy = VerifyPolicy(**best["policy"])
    chosen_combiner = dict(variants)[best["selector"]]
    net.rationale_combiner = chosen_combiner
    selector = MemoSelector(TrainedSelector(network=net))
    if rationale_relevance:
        best_of = {
            name: max((t for t in trials if t["selector"] == name), key=lambda t: t[SELECT])
            for name, _ in variants
        }
        comb_stats["best_policy_mean_f1"] = {k: v[SELECT] for k, v in best_of.items()}
        comb_stats["chosen"] = best["selector"]
    if progress:
        progress("calibrating on dev", 2, 3)
    # which sentences it cites (min_cited, the reading rule kept), then strong
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
        "rationale_calibration": rat_stats,
        **({"citer_calibration": cit_stats} if cit_stats else {}),
        **({"rationale_combiner": comb_stats} if comb_stats else {}),
        "verdict_calibration": ver_stats,
        "policy_trials": sorted(trials, key=lambda t: -t[SELECT])[:10],
        "cite_trials": cite_trials,
        **({"quote_trials": quote_trials} if quote_trials else {}),
        "strong_table": table,
        "open_k": open_k,
        "open_candidates": OPEN_RERANKED if data.reranked else OPEN_FIRST_STAGE,
    }
    return Chosen(policy, rat_cal, temp, report, chosen_combiner, cit_cal)


def choose_combined_policy(
    selector: RationaleSelector,
    verdict: VerdictModel,
    data: VerifierData,
    policy: VerifyPolicy,
    open_k: int,
    folds: int = 5,
    seed: int = 0,
    quote: bool = False,
    progress: Progress | None = None,
) -> tuple[VerifyPolicy, dict[str, Any]]:
    """The gate of the combined verdict, chosen on the dev claims in the open setting: the
    evidence score's ``relevance_weight`` and its threshold ``min_relevance`` (grids
    :data:`WEIGHT_GRID` x :data:`GATE_GRID`, the selector's part of ``policy`` kept) by
    :data:`SELECT`, then, with that gate, which sentences are cited (``min_cited``,
    :data:`CITE_GRID`; the verdict reads the cited ones too), with ``quote`` (the selector
    has a citer) which sentences the citer quotes (``min_quoted``, :data:`QUOTE_GRID`), then
    ``strong``. The report
    holds the trials and an estimate of what the choice is worth on claims it did not see:
    ``folds``-fold cross-validation over the dev claims (both chosen on the other folds,
    scored on each held fold, pooled)."""
    from sciera.train.verifier_data import folds as make_folds

    dev = data.dev_ids
    rel, open_ = _relevance(data), _open_candidates(data, dev, open_k)
    grid = [
        replace(policy, relevance_weight=w, min_relevance=m, min_cited=None, min_quoted=None)
        for w in WEIGHT_GRID
        for m in GATE_GRID
    ]
    run = policy_runs(
        selector, verdict, data, dev, open_, rel, progress, "combined gate: dev claims verified"
    )
    scored: dict[tuple[VerifyPolicy, tuple[str, ...]], dict[str, float]] = {}

    def score(p: VerifyPolicy, ids: Sequence[str]) -> dict[str, float]:
        key = (p, tuple(ids))
        if key not in scored:
            scored[key] = scifact_scores(data, ids, run(p))
        return scored[key]

    def best(ids: Sequence[str]) -> VerifyPolicy:
        return grid[max(range(len(grid)), key=lambda i: (score(grid[i], ids)[SELECT], -i))]

    def cite(p: VerifyPolicy, ids: Sequence[str]) -> tuple[VerifyPolicy, dict[str, Any]]:
        out, trials = choose_cited(p, ids, score)
        if not quote:
            return out, {"cite_trials": trials}
        out, quoted = choose_quoted(out, ids, score)
        return out, {"cite_trials": trials, "quote_trials": quoted}

    on_dev = [score(p, dev) for p in grid]
    cited, cite_trials = cite(best(dev), dev)
    table = claim_table(data, dev, run(cited))
    out = replace(cited, strong=choose_strong(table))
    pooled: dict[str, Verification] = {}
    picked = []
    for fold in make_folds(dev, folds, seed):
        rest = [c for c in dev if c not in set(fold)]
        g = best(rest)
        p, _ = cite(g, rest)
        picked.append(
            {
                "relevance_weight": g.relevance_weight,
                "gate": g.min_relevance,
                "cited": p.min_cited,
                **({"quoted": p.min_quoted} if quote else {}),
            }
        )
        pooled.update({c: run(p)[c] for c in fold})
    trials = [
        {
            "relevance_weight": p.relevance_weight,
            "min_relevance": p.min_relevance,
            **{k: round(v, 4) for k, v in m.items()},
        }
        for p, m in zip(grid, on_dev, strict=True)
    ]
    base = replace(policy, relevance_weight=1.0, min_cited=None, min_quoted=None)
    report = {
        "chosen_on": f"{len(dev)} dev claims, open setting (top {open_k})",
        "trials": sorted(trials, key=lambda t: -t[SELECT])[:10],
        **cite_trials,
        "strong_table": table,
        "card_gate": {k: round(v, 4) for k, v in score(base, dev).items()},
        "cross_validated": {
            "folds": folds,
            "picked": picked,
            **{k: round(v, 4) for k, v in scifact_scores(data, dev, pooled).items()},
        },
    }
    return out, report


# --- held-out reports ------------------------------------------------------------------------


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
        cands = _open_candidates(data, ids, open_k)
        rel = _relevance(data)
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


# --- the job ---------------------------------------------------------------------------------


def train_verifier(
    job: VerifierJob,
    settings: Settings | None = None,
    progress: Progress | None = None,
    command: str | None = None,
) -> VerifierResult:
    """Train (or resume) the verifier of ``job`` and write its model folder; with
    ``job.recalibrate``, refit the calibrators and the policy of the model trained by the
    same options on its dev split, without training."""
    from sciera.train.prepare import open_work

    settings = settings or load_settings()
    cfg, spec = job.config, job.data
    if job.threads is not None:
        import torch

        torch.set_num_threads(job.threads)
    command = command or shlex.join(["sciera", *sys.argv[1:]])
    if job.add_citer:
        return _add_citer(job, settings, progress, command)
    if job.recalibrate:
        return _recalibrate(job, settings, progress, command)
    model_dir, work = open_work(job.out, settings, job.overwrite, run_key(job))
    started = time.monotonic()
    data = prepare_verifier(spec, settings, work, progress)
    state = fit_verifier(cfg, data, work, progress)
    if state.best_epoch is None:
        raise ScieraError("training ended before one epoch was evaluated; raise the time budget")
    card: dict[str, Any] = {
        "name": model_dir.name,
        "kind": "claim verifier (rationale selector + verdict model, one encoder)",
        "base": cfg.base,
        "command": command,
        "run_key": run_key(job),
        "epochs": [asdict(e) for e in state.epochs],
        "best_epoch": state.best_epoch,
        "select_metric": SELECT,
        "train_seconds": state.seconds,
    }
    return _finish(
        job, str(work / "best"), data, card, model_dir, work, progress, started, settings
    )


def _trained_folder(
    job: VerifierJob, settings: Settings, what: str
) -> tuple[Path, Path, dict[str, Any]]:
    """The model folder of ``job.out``, its work folder and card, checked to hold a verifier
    trained with ``job``'s options (one-line errors naming the folder)."""
    from sciera.artifacts.card import read_card
    from sciera.train.prepare import model_dir_for

    model_dir = model_dir_for(job.out, settings)
    work = model_dir.with_name(model_dir.name + ".work")
    card = read_card(model_dir) if model_dir.is_dir() else None
    marker = work / "run.json"
    trained_key = json.loads(marker.read_text())["key"] if marker.is_file() else None
    if card is None or "heads" not in card:
        raise ScieraError(f"{model_dir}: no verifier trained there to {what}")
    if card.get("run_key", trained_key) != run_key(job):
        raise ScieraError(
            f"{model_dir}: its training options differ from these (pass the options it was "
            f"trained with: {card['command']})"
        )
    return model_dir, work, card


def _recalibrate(
    job: VerifierJob, settings: Settings, progress: Progress | None, command: str
) -> VerifierResult:
    model_dir, work, card = _trained_folder(job, settings, "recalibrate")
    started = time.monotonic()
    data = prepare_verifier(job.data, settings, work, progress)
    source = work / "best" if (work / "best" / "config.json").is_file() else model_dir
    card = {k: v for k, v in card.items() if k not in ("dev", "test_fold", "pubmedqa_held_out")}
    card["run_key"] = run_key(job)
    card["recalibrated"] = {
        "date": time.strftime("%Y-%m-%d"),
        "command": command,
        "weights_from": "the best epoch's float32 checkpoint"
        if source != model_dir
        else "the model folder's weights",
    }
    return _finish(job, str(source), data, card, model_dir, work, progress, started, settings)


def _add_citer(
    job: VerifierJob, settings: Settings, progress: Progress | None, command: str
) -> VerifierResult:
    """Train the citer of ``job`` and add it to the verifier already in ``job.out``: its
    calibrator and ``min_quoted`` (for the trained verdict's policy, and the combined
    verdict's with the folder's LLM combiners) chosen on the dev claims; the weights, the
    other calibrators, the rest of both policies and the combiners are kept, so nothing but
    the citer is refit (the combined verdict's LLM runs only on the dev abstracts past its
    gate, once)."""
    from sciera.artifacts.card import versions
    from sciera.verify.llm_verdict import LLMVerdict

    model_dir, work, card = _trained_folder(job, settings, "add a citer to")
    started = time.monotonic()
    data = prepare_verifier(job.data, settings, work, progress)
    fitted = fit_citer(job.citer, data, work, progress)
    net = VerifierNetwork.load(model_dir)
    net.citer = fitted.load()
    dev = data.dev_ids
    if progress:
        progress("choosing the quoted sentences on dev", 0, 2)
    sentences = dev_sentences(net, data, _union_candidates(data, dev, job.open_k))
    net.citer.calibrator, stats = fit_citer_calibrator(net.citer, sentences)
    rel, open_ = _relevance(data), _open_candidates(data, dev, job.open_k)
    selector = MemoSelector(TrainedSelector(network=net))

    def choose(
        verdict: VerdictModel, policy: VerifyPolicy, step: str
    ) -> tuple[VerifyPolicy, list[Any]]:
        run = policy_runs(selector, MemoVerdict(verdict), data, dev, open_, rel, progress, step)
        return choose_quoted(policy, dev, lambda p, ids: scifact_scores(data, ids, run(p)))

    policy, trials = choose(
        TrainedVerdict(network=net), VerifyPolicy(**card["policy"]), "quoting: trained verdict"
    )
    combiner = card.get("combiner") or {}
    if progress:
        progress("choosing the quoted sentences on dev", 1, 2)
    if combiner.get("policy") and data.reranked:
        from sciera.llm.registry import make_llm

        combiners = {
            kind: calibration.load(model_dir / COMBINER_FILES[kind])
            for kind in combiner.get("files") or {}
        }
        combined = CombinedVerdict(
            TrainedVerdict(network=net),
            LLMVerdict(make_llm(settings)),
            combiners,
            combiner.get("llm"),
        )
        chosen, quote_trials = choose(
            combined,
            VerifyPolicy(**combiner["policy"]),
            "quoting: combined verdict (the LLM reads the dev abstracts past the gate)",
        )
        combiner["policy"] = asdict(chosen)
        combiner.setdefault("policy_search", {})["quote_trials"] = quote_trials
    if progress:
        progress("choosing the quoted sentences on dev", 2, 2)
    card = {k: v for k, v in card.items() if k not in ("dev", "test_fold")} | {
        "policy": asdict(policy),
        "citer": {
            **fitted.section(CITER_ADAPTERS),
            "calibrator": CITER_CALIBRATOR,
            "training": fitted.report(),
        },
        "citer_added": {"date": time.strftime("%Y-%m-%d"), "command": command},
        "dev": {
            **card.get("dev", {}),
            "citer_calibration": stats,
            "quote_trials": trials,
            **evaluate_claims(net, data, dev, policy, job.open_k),
        },
        "versions": versions(),
        "wall_seconds": time.monotonic() - started,
    }
    if data.test_ids:
        card["test_fold"] = evaluate_claims(net, data, data.test_ids, policy, job.open_k)

    def save(folder: Path) -> None:
        for f in model_dir.iterdir():  # the citer's files are replaced, not kept beside
            if f.is_file() and not f.name.startswith(CITER_PREFIX):
                shutil.copyfile(f, folder / f.name)
        fitted.copy_to(folder, CITER_ADAPTERS)
        calibration.save(net.citer.calibrator, folder / CITER_CALIBRATOR)

    install(model_dir, work, card, save)
    return VerifierResult(model_dir, card)


def _finish(
    job: VerifierJob,
    weights: str,
    data: VerifierData,
    card: dict[str, Any],
    model_dir: Path,
    work: Path,
    progress: Progress | None,
    started: float,
    settings: Settings | None = None,
) -> VerifierResult:
    """Calibrate and choose the policy on dev, report the held-out sets, write the folder."""
    from sciera.artifacts.card import versions

    cfg = job.config
    fitted: FittedCiter | None = None
    if job.citer is not None:
        fitted = fit_citer(job.citer, data, work, progress)
    model, tok = load_for_training(weights)
    model.eval()
    net = VerifierNetwork(model, tok, cfg.inputs, citer=fitted.load() if fitted else None)
    chosen = calibrate_and_choose(
        net,
        data,
        job.open_k,
        progress,
        bias=job.verdict_bias,
        min_relevance=job.min_relevance,
        rationale_relevance=job.rationale_relevance,
    )
    combiners: dict[str, Any] = {}
    if job.combine_llm:
        # the combiners read what the reading rule picks: citing is chosen apart, after
        reading = replace(chosen.policy, min_cited=None)
        combiners, card["combiner"], llm = _fit_combiners(
            job, net, data, reading, work, progress, settings or load_settings()
        )
        if "claim" in combiners and data.reranked:
            if progress:
                progress("choosing the combined verdict's gate on dev", 0, 1)
            verdict = MemoVerdict(CombinedVerdict(TrainedVerdict(network=net), llm, combiners))
            selector = MemoSelector(TrainedSelector(network=net))
            policy, search = choose_combined_policy(
                selector,
                verdict,
                data,
                chosen.policy,
                job.open_k,
                quote=net.citer is not None,
                progress=progress,
            )
            card["combiner"]["policy"] = asdict(policy)
            card["combiner"]["policy_search"] = search
            if progress:
                progress("choosing the combined verdict's gate on dev", 1, 1)
    card.update(
        {
            "config": {
                **asdict(cfg),
                "fp16": job.fp16,
                "open_k": job.open_k,
                "verdict_bias": job.verdict_bias,
            },
            "data": data.card_data(job.data),
            "splits": data.guard.describe(),
            "heads": {"rationale": 0, "verdict": [1, 2, 3], "labels": list(VERDICT_LABELS)},
            "inputs": cfg.inputs,
            "calibrators": {
                "rationale": RATIONALE_CALIBRATOR,
                "verdict": VERDICT_CALIBRATOR,
                **(
                    {"rationale_combiner": RATIONALE_COMBINER}
                    if chosen.rationale_combiner is not None
                    else {}
                ),
            },
            **(
                {
                    "citer": {
                        **fitted.section(CITER_ADAPTERS),
                        "calibrator": CITER_CALIBRATOR,
                        "training": fitted.report(),
                    }
                }
                if fitted is not None and chosen.citer is not None
                else {}
            ),
            "policy": asdict(chosen.policy),
            "dev": {
                **chosen.report,
                **evaluate_claims(net, data, data.dev_ids, chosen.policy, job.open_k),
            },
            "versions": versions(),
        }
    )
    if data.test_ids:
        card["test_fold"] = evaluate_claims(net, data, data.test_ids, chosen.policy, job.open_k)
    if data.pubmedqa_held:
        card["pubmedqa_held_out"] = evaluate_pubmedqa(net, data)
    card["dev_same_as_shipped_reranker"] = _same_dev_as_reranker(data.dev_ids)
    card["wall_seconds"] = time.monotonic() - started

    def save(folder: Path) -> None:
        if job.fp16:
            model.half()
        model.save_pretrained(str(folder))
        tok.save_pretrained(str(folder))
        calibration.save(chosen.rationale, folder / RATIONALE_CALIBRATOR)
        calibration.save(chosen.verdict, folder / VERDICT_CALIBRATOR)
        if chosen.rationale_combiner is not None:
            calibration.save(chosen.rationale_combiner, folder / RATIONALE_COMBINER)
        if fitted is not None and chosen.citer is not None:
            fitted.copy_to(folder, CITER_ADAPTERS)
            calibration.save(chosen.citer, folder / CITER_CALIBRATOR)
        for kind, combiner in combiners.items():
            calibration.save(combiner, folder / COMBINER_FILES[kind])

    install(model_dir, work, card, save)
    return VerifierResult(model_dir, card)


def _fit_combiners(
    job: VerifierJob,
    net: VerifierNetwork,
    data: VerifierData,
    policy: VerifyPolicy,
    work: Path,
    progress: Progress | None,
    settings: Settings,
) -> tuple[dict[str, Any], dict[str, Any], Any]:
    """The LLM combiners (the settings' LLM), their card section and the LLM verdict model
    they combine."""
    from sciera.llm.registry import make_llm
    from sciera.train.verifier_combiner import combiner_rows, fit_combiners, natural_counts
    from sciera.verify.llm_verdict import LLMVerdict

    llm = make_llm(settings)
    verdict = LLMVerdict(llm)

    def step(n: int, total: int) -> None:
        if progress:
            progress("LLM label probabilities on training claims", n, total)

    rows = combiner_rows(
        data,
        TrainedSelector(network=net),
        TrainedVerdict(network=net),
        verdict,
        policy,
        per_label=job.per_label,
        seed=job.data.seed,
        progress=step,
        negated=job.negated_claim,
    )
    combiners, report = fit_combiners(rows, natural=natural_counts(data))
    section = {
        "llm": llm.model_id,
        "prompts": LLMVerdict.version(),
        "fitted_on": "the verifier's training claims (evidence and cited abstracts) and "
        "training PubMedQA questions; never dev or held-out ones",
        "per_label": job.per_label,
        "prior": "the training data's label mix (intercepts corrected from the capped rows')",
        "files": {k: COMBINER_FILES[k] for k in combiners},
        **report,
    }
    return combiners, section, verdict


def _same_dev_as_reranker(dev_ids: Sequence[str]) -> bool:
    """Whether the dev claims are among the shipped cross-encoder's (and embedder's) dev
    queries, which the first stage and the reranker never trained on (claims the guard
    refused leave both)."""
    from sciera.artifacts.card import read_card
    from sciera.artifacts.registry import CROSS_ENCODER, shipped_dir

    folder = shipped_dir(CROSS_ENCODER, "scifact-minilm")
    card = read_card(folder) if folder is not None else None
    theirs = (card or {}).get("data", {}).get("dev_qids") or []
    return bool(theirs) and bool(dev_ids) and set(dev_ids) <= set(theirs)


def install(
    model_dir: Path, work: Path, card: dict[str, Any], save: Callable[[Path], None]
) -> None:
    """Write the model, its card and (last) its manifest into a temporary folder, then swap
    it in, so a crash never leaves a half-written model folder under the model's name."""
    from sciera.artifacts.manifest import write_manifest
    from sciera.train.verifier_card import write_card

    tmp = model_dir.with_name(model_dir.name + ".tmp")
    shutil.rmtree(tmp, ignore_errors=True)
    tmp.mkdir(parents=True)
    save(tmp)
    write_card(tmp, card)
    write_manifest(tmp)
    if model_dir.exists():
        shutil.rmtree(model_dir)
    tmp.rename(model_dir)
    (work / "card.json").write_text(json.dumps(card, indent=1) + "\n")
