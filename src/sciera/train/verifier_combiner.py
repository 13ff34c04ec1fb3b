"""The LLM's label probabilities as a feature of the verdict: a logistic combiner fitted on
training claims and training questions, never on dev or held-out ones.

The trained verdict head alone barely tells SUPPORT from CONTRADICT on held-out claims; the
embedded LLM's zero-shot probabilities over the three answer words order them far better but
lean towards SUPPORT and "yes". :class:`~sciera.verify.calibration.LogisticCombiner` learns
how much of each to trust and the labels' prior, one combiner per kind of input (claims:
support / contradict / neither; questions: yes / no / maybe), from rows of

- the verifier's *training* claims: each evidence abstract (SUPPORT or CONTRADICT) and each
  cited abstract of a claim without evidence (NOT ENOUGH INFO), up to ``per_label`` of each,
- the PubMedQA questions it trained on (never its held-out fold): yes / no / maybe,
- with ``pooled`` (the recipe's ``combiner.pooled``), the *train* pairs of other labelled
  collections (:func:`sciera.datasets.pairs.load_pairs`: HealthVer, COVID-Fact, Evidence
  Inference as claims, BioASQ as questions), up to ``per_label`` of each label per
  collection. The verdict head never saw them, so on them its probabilities are as sure as
  on a new claim; on its own training claims it is surer than it will ever be again, and a
  combiner fitted on those alone learns to trust it too far (with ``own=False`` the pooled
  pairs are the only claim rows),

each read as inference reads it: the trained selector's rationale sentences under the
card's policy, then the verdict models: the trained head, the LLM on the claim, and when
asked (``sciera train verifier --negated-claim``) the LLM on the claim negated
(:class:`~sciera.verify.llm_verdict.NegatedLLMVerdict`; the LLM layer caches every call, so a
stopped run resumes where it was). Which inputs a claim combiner reads is then chosen on the
same rows: the negated claim is kept only when it raises the cross-validated macro-F1.
"""

from __future__ import annotations

import random
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass
from typing import Any

import numpy as np

from sciera.datasets.pairs import LabelledPair
from sciera.train.verifier_data import NEI, VerifierData
from sciera.train.verifier_eval import label_scores
from sciera.types import VERDICT_LABELS
from sciera.verify.base import AbstractText, RationaleSelector, VerdictInput, VerdictModel
from sciera.verify.calibration import LogisticCombiner
from sciera.verify.llm_verdict import COMBINER_INPUTS, UNIFORM, NegatedLLMVerdict
from sciera.verify.verifier import VerifyPolicy, pick_rationales

KINDS = ("claim", "question")
INPUT_SETS = {
    "claim": (("trained", "llm"), ("trained", "llm", "llm_negated")),
    "question": (("trained", "llm"),),
}
"""Per kind, the input sets a combiner is chosen from (the first unless a later one scores
higher): a question has no negation (:class:`NegatedLLMVerdict` gives it no information)."""


@dataclass(frozen=True)
class CombinerRow:
    kind: str  # claim | question
    group: str  # the claim or question id (cross-validation folds keep a group together)
    key: str  # group and abstract: what the cache knows the row by
    label: int
    trained: tuple[float, float, float]
    llm: tuple[float, float, float]
    llm_negated: tuple[float, float, float] = UNIFORM


Job = tuple[str, str, str, str, AbstractText, int]


def _pools(
    data: VerifierData, pooled: Sequence[LabelledPair] = ()
) -> dict[tuple[str, int, str], list[Job]]:
    """Every (kind, group, key, text, abstract, label) a row could be read from, by kind,
    label and source (``""``: the verifier's own training claims and questions; else the
    pooled pair's collection)."""
    by: dict[tuple[str, int, str], list[Job]] = {}
    for cid in data.train_ids:
        c = data.claims[cid]
        docs = [(d, VERDICT_LABELS.index(g.label)) for d, g in c.evidence.items()]
        if not c.evidence:
            docs = [(d, NEI) for d in c.cited_doc_ids]
        for doc, label in docs:
            if doc in data.abstracts:
                job = ("claim", cid, f"{cid}/{doc}", c.claim, data.abstracts[doc], label)
                by.setdefault(("claim", label, ""), []).append(job)
    for q in data.pubmedqa_train:
        job = ("question", q.id, q.id, q.question, AbstractText(q.id, "", q.sentences), q.label)
        by.setdefault(("question", q.label, ""), []).append(job)
    for pair in pooled:
        if pair.split != "train":
            raise ValueError(f"{pair.source} pair {pair.id} is {pair.split}, not train")
        key = f"{pair.source}:{pair.id}"
        label = VERDICT_LABELS.index(pair.label)
        abstract = AbstractText(key, "", pair.evidence)
        job = (pair.form, f"{pair.source}:{pair.group}", key, pair.claim, abstract, label)
        by.setdefault((pair.form, label, pair.source), []).append(job)
    return by


def _jobs(
    data: VerifierData,
    per_label: int,
    seed: int,
    pooled: Sequence[LabelledPair] = (),
    own: bool = True,
) -> list[Job]:
    """The jobs to read: at most ``per_label`` of each label, kind and source, drawn with
    ``seed``. ``own=False`` draws as with the own claims, then leaves them out (not the
    questions), so the pooled rows are the same either way."""
    rng = random.Random(seed)
    by = _pools(data, pooled)
    out = []
    for key in sorted(by):
        pool = by[key]
        rng.shuffle(pool)
        if own or key[0] != "claim" or key[2]:
            out += pool[:per_label]
    return out


def natural_counts(data: VerifierData) -> dict[str, list[int]]:
    """Per kind, how many inputs of each label the verifier's own training data holds
    before the ``per_label`` cap: the labels' natural prior the combiners are corrected to
    (the mix of what it reads at inference, whatever collections the rows come from)."""
    by = _pools(data)
    return {kind: [len(by.get((kind, k, ""), [])) for k in range(3)] for kind in KINDS}


def combiner_rows(
    data: VerifierData,
    selector: RationaleSelector,
    trained: VerdictModel,
    llm: VerdictModel,
    policy: VerifyPolicy,
    *,
    per_label: int = 100,
    seed: int = 0,
    progress: Callable[[int, int], None] | None = None,
    negated: bool = False,
    pooled: Sequence[LabelledPair] = (),
    own: bool = True,
) -> list[CombinerRow]:
    """The rows, each read as inference reads it with the selector, calibrators and policy
    given (so they are computed again, not kept: the LLM layer's response cache makes a
    repeated LLM question free, and a stopped run resumes from it). ``negated``: also the
    LLM on each claim negated (else that input carries no information and is never
    chosen). ``pooled``: train pairs of other collections, read as abstracts without a
    title; ``own``: whether the verifier's own training claims are rows too."""
    jobs = _jobs(data, per_label, seed, pooled, own)
    negation = NegatedLLMVerdict(llm)
    out = []
    for n, (kind, group, key, text, abstract, label) in enumerate(jobs, 1):
        pick = policy if kind == "claim" else policy.for_question()
        scores = selector.score_many(text, [abstract])[0]
        idx, _ = pick_rationales(scores, pick)
        item = VerdictInput(tuple(abstract.sentences[i] for i in idx), abstract.title)
        a = trained.predict_many(text, [item])[0]
        b = llm.predict_many(text, [item])[0]
        c = negation.predict_many(text, [item])[0] if negated else UNIFORM
        out.append(CombinerRow(kind, group, key, label, a, b, c))
        if progress is not None:
            progress(n, len(jobs))
    return out


def fit_combiners(
    rows: Sequence[CombinerRow],
    folds: int = 5,
    seed: int = 0,
    natural: Mapping[str, Sequence[int]] | None = None,
) -> tuple[dict[str, LogisticCombiner], dict[str, Any]]:
    """One combiner per kind, fitted on all its rows, and a report: per kind, the rows by
    label and the cross-validated accuracy and macro-F1 (folds by claim or question) of the
    combiner, the trained head and the LLM alone on the same rows.

    The combiner's inputs are chosen among :data:`INPUT_SETS`: a later set (more inputs) is
    kept only when its cross-validated macro-F1 is higher and its combiner, fitted on all
    the rows, decides as the LLM readings do where they all agree (:func:`against_the_llm`;
    ``input_search`` reports each, and a set that fails says where).

    The rows hold at most ``per_label`` of each label, so a combiner fitted on them learns
    that capped mix as its prior. With ``natural`` (per kind, the training data's count of
    each label before the cap: :func:`natural_counts`) each combiner's intercepts are moved
    by log(natural share / row share) per label, the prior-shift correction of a logistic
    model fitted on a stratified sample, so it predicts for inputs mixed as the training
    data is (the cross-validated scores are of the corrected combiners, on the capped rows)."""
    from sciera.train.verifier_data import folds as make_folds

    combiners: dict[str, LogisticCombiner] = {}
    report: dict[str, Any] = {}
    for kind in KINDS:
        mine = [r for r in rows if r.kind == kind]
        if not mine:
            continue
        x = {
            name: np.array([getattr(r, name) for r in mine], dtype=float)
            for name in COMBINER_INPUTS
        }
        y = np.array([r.label for r in mine], dtype=int)
        counts = natural.get(kind) if natural is not None else None
        groups = [r.group for r in mine]
        test_folds = [np.isin(groups, fold) for fold in make_folds(groups, folds, seed)]
        cvs = {}
        # the negated claim is a candidate only when the rows were read with it
        asked = {"trained", "llm"} | {n for n in x if np.ptp(x[n]) > 0}
        for names in (c for c in INPUT_SETS[kind] if set(c) <= asked):
            cvs[names] = np.zeros((len(mine), 3))
            for test in test_folds:
                train = [x[n][~test] for n in names]
                cvs[names][test] = _fit(train, names, y[~test], counts)(
                    *[x[n][test] for n in names]
                )
        scored = {names: label_scores(cv, y) for names, cv in cvs.items()}
        fitted = {names: _fit([x[n] for n in names], names, y, counts) for names in cvs}
        against = {names: against_the_llm(c) for names, c in fitted.items()}
        # more inputs only for a higher macro-F1 (a tie keeps the fewer), and only a
        # combiner that decides as its LLM readings do when they all agree
        eligible = [n for n in scored if against[n] is None] or [min(scored, key=len)]
        inputs = max(eligible, key=lambda names: (scored[names]["macro_f1"], -len(names)))
        search = {
            "+".join(names): {
                **_rounded(s),
                **({"against_the_llm": against[names]} if against[names] else {}),
            }
            for names, s in scored.items()
        }
        combiners[kind] = fitted[inputs]
        report[kind] = {
            "rows": {VERDICT_LABELS[k]: int((y == k).sum()) for k in range(3)},
            **(
                {"natural": {VERDICT_LABELS[k]: int(counts[k]) for k in range(3)}}
                if counts is not None
                else {}
            ),
            "inputs": list(inputs),
            "cross_validated": {
                "combined": _rounded(scored[inputs]),
                **{n: _rounded(label_scores(x[n], y)) for n in inputs},
            },
            **({"input_search": search} if len(search) > 1 else {}),
            **({"against_the_llm": against[inputs]} if against[inputs] else {}),
            "folds": folds,
        }
    return combiners, report


AGREEING = (0.7, 0.96)
"""How sure the LLM readings are in :func:`against_the_llm`'s check."""


def against_the_llm(combiner: LogisticCombiner) -> str | None:
    """Where ``combiner`` decides against its LLM readings when they all agree: every
    input but the trained head (held uniform) sure of SUPPORT, or of CONTRADICT (the
    negated claim's reading already turned to the claim's side), and the combiner
    preferring the other of the two ("SUPPORT at 0.96"); None when it never does."""
    for sure in AGREEING:
        rest = (1.0 - sure) / 2
        for k in (0, 1):
            reading = [rest, rest, rest]
            reading[k] = sure
            probs = [UNIFORM if name == "trained" else reading for name in combiner.inputs]
            p = combiner(*[np.array([r]) for r in probs])[0]
            if p[k] <= p[1 - k]:
                return f"{VERDICT_LABELS[k]} at {sure}"
    return None


def _rounded(scores: dict[str, float]) -> dict[str, float]:
    return {k: round(v, 4) if isinstance(v, float) else v for k, v in scores.items()}


def _fit(
    probs: Sequence[np.ndarray],
    inputs: Sequence[str],
    y: np.ndarray,
    natural: Sequence[int] | None,
) -> LogisticCombiner:
    fitted = LogisticCombiner.fit(probs, y, inputs)
    return fitted.shifted(prior_shift(natural, y)) if natural is not None else fitted


def prior_shift(natural: Sequence[int], labels: np.ndarray) -> tuple[float, ...]:
    """log(natural share) - log(row share) per label (0 for a label with no rows or none in
    the data: nothing to correct)."""
    rows = np.bincount(labels, minlength=3).astype(float)
    nat = np.asarray(natural, dtype=float)
    if rows.sum() == 0 or nat.sum() == 0:
        return (0.0, 0.0, 0.0)
    out = []
    for k in range(3):
        ok = rows[k] > 0 and nat[k] > 0
        out.append(float(np.log(nat[k] / nat.sum()) - np.log(rows[k] / rows.sum())) if ok else 0.0)
    return tuple(out)
