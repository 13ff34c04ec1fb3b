"""The verifier's question decider (:mod:`sciera.verify.decider`), fitted on training
questions only: BioASQ's 7B and 8B yes/no questions with their snippets (9B is dev, later
batches never read) and the PubMedQA questions the verifier trains on (never its held-out
fold), at most ``per_label`` of each label per source, drawn with the seed.

Each question is read as the verify stage reads it: its snippets grouped by document (its
first ``abstracts`` documents in snippet order) or its abstract, the verifier's selector and
verdict model as inference builds them from the model folder (the combined verdict, its
policy), then the decider's inputs (:data:`~sciera.verify.decider.DECIDER_INPUTS`). The LLM
layer caches every call, so a stopped run resumes where it was. Which inputs the decider
reads is chosen on the same rows by cross-validated macro-F1 (folds by question; a tie keeps
the fewer), and its intercepts are moved to the natural label mix of the training questions
(:func:`~sciera.train.verifier_combiner.prior_shift`).
"""

from __future__ import annotations

import random
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import numpy as np

from sciera.train.verifier_combiner import prior_shift
from sciera.train.verifier_data import PubMedQAItem
from sciera.train.verifier_eval import label_scores
from sciera.types import VERDICT_LABELS
from sciera.verify.base import AbstractText, Probs, RationaleSelector, VerdictModel
from sciera.verify.calibration import LogisticCombiner
from sciera.verify.decider import decisive, direct_probs
from sciera.verify.verifier import VerifyPolicy, verify_abstracts

INPUT_SETS = (("verdict",), ("direct",), ("verdict", "direct"))
"""The input sets the decider is chosen from (a later one only when it scores higher)."""


@dataclass(frozen=True)
class Question:
    source: str  # bioasq | pubmedqa
    id: str
    text: str
    abstracts: tuple[AbstractText, ...]
    label: int  # VERDICT_LABELS index: yes = SUPPORT, no = CONTRADICT, maybe = NEI


@dataclass(frozen=True)
class DeciderRow:
    source: str
    group: str
    label: int
    aggregated: int  # the verifier's own overall label, as the stage decides without one
    verdict: Probs
    direct: Probs


def bioasq_questions(path: Path, abstracts: int) -> list[Question]:
    """BioASQ's training yes/no questions (7B, 8B), each with its first ``abstracts``
    documents' snippets as sentence lists (as the verify stage reads a candidate pool)."""
    from sciera.datasets.loaders import load_dataset

    data = load_dataset("bioasq", path, split="train")
    out = []
    for qid, text in data.queries.items():
        docs = list((data.sentences or {}).get(qid, {}).items())[:abstracts]
        texts = tuple(AbstractText(doc, title, tuple(s)) for doc, (title, s) in docs)
        label = VERDICT_LABELS.index("SUPPORT" if data.labels[qid] == "yes" else "CONTRADICT")
        out.append(Question("bioasq", qid, text, texts, label))
    return out


def pubmedqa_questions(items: Sequence[PubMedQAItem]) -> list[Question]:
    return [
        Question("pubmedqa", q.id, q.question, (AbstractText(q.id, "", q.sentences),), q.label)
        for q in items
    ]


def capped(questions: Sequence[Question], per_label: int, seed: int) -> list[Question]:
    """At most ``per_label`` questions of each (source, label), drawn with ``seed``."""
    rng = random.Random(seed)
    by: dict[tuple[str, int], list[Question]] = {}
    for q in questions:
        by.setdefault((q.source, q.label), []).append(q)
    out = []
    for key in sorted(by):
        pool = sorted(by[key], key=lambda q: q.id)
        rng.shuffle(pool)
        out += pool[:per_label]
    return out


def decider_rows(
    questions: Sequence[Question],
    selector: RationaleSelector,
    verdict: VerdictModel,
    policy: VerifyPolicy,
    llm: Any,
    progress: Callable[[int, int], None] | None = None,
) -> list[DeciderRow]:
    """Each question verified as the stage verifies it, and the decider's inputs read."""
    out = []
    for n, q in enumerate(questions, 1):
        v = verify_abstracts(q.text, q.abstracts, selector, verdict, policy)
        aggregated = VERDICT_LABELS.index(v.label) if v.label in VERDICT_LABELS else 2
        row = DeciderRow(
            q.source, q.id, q.label, aggregated, decisive(v), direct_probs(llm, q.text, v)
        )
        out.append(row)
        if progress is not None:
            progress(n, len(questions))
    return out


def fit_decider(
    rows: Sequence[DeciderRow], natural: Sequence[int], folds: int = 5, seed: int = 0
) -> tuple[LogisticCombiner, dict[str, Any]]:
    """The decider over the input set with the best cross-validated macro-F1, fitted on all
    rows, and its report: per input set and per source, cross-validated accuracy and
    macro-F1, beside the verifier's own aggregated decision on the same rows."""
    from sciera.train.verifier_data import folds as make_folds

    y = np.array([r.label for r in rows], dtype=int)
    x = {n: np.array([getattr(r, n) for r in rows], dtype=float) for n in ("verdict", "direct")}
    groups = [r.group for r in rows]
    tests = [np.isin(groups, fold) for fold in make_folds(groups, folds, seed)]
    shift = prior_shift(natural, y)
    cvs = {}
    for names in INPUT_SETS:
        cv = np.zeros((len(rows), 3))
        for test in tests:
            fitted = LogisticCombiner.fit([x[n][~test] for n in names], y[~test], names)
            cv[test] = fitted.shifted(shift)(*[x[n][test] for n in names])
        cvs[names] = cv
    scored = {names: label_scores(cv, y) for names, cv in cvs.items()}
    inputs = max(INPUT_SETS, key=lambda n: (round(scored[n]["macro_f1"], 6), -len(n)))
    decider = LogisticCombiner.fit([x[n] for n in inputs], y, inputs).shifted(shift)
    aggregated = np.eye(3)[[r.aggregated for r in rows]]
    report: dict[str, Any] = {"inputs": list(inputs), "folds": folds, "by_source": {}}
    for source in sorted({r.source for r in rows}):
        mine = np.array([r.source == source for r in rows])
        report["by_source"][source] = {
            "rows": {VERDICT_LABELS[k]: int((y[mine] == k).sum()) for k in range(3)},
            "aggregated": _rounded(label_scores(aggregated[mine], y[mine])),
            **{"+".join(n): _rounded(label_scores(cvs[n][mine], y[mine])) for n in INPUT_SETS},
        }
    report["cross_validated"] = {"+".join(n): _rounded(s) for n, s in scored.items()}
    report["aggregated"] = _rounded(label_scores(aggregated, y))
    return decider, report


def natural_counts(questions: Sequence[Question]) -> list[int]:
    """How many training questions of each label there are before the cap."""
    return [sum(q.label == k for q in questions) for k in range(3)]


def _rounded(scores: dict[str, float]) -> dict[str, float]:
    return {k: round(v, 4) if isinstance(v, float) else v for k, v in scores.items()}


STEP = "the question decider: training questions read"


def decider_stage(run: Any) -> None:
    """Fit the question decider of ``run.job`` (a :class:`~sciera.train.verifier_stages.Run`)
    and add it to the verifier in the model folder (a recipe without one: take an earlier
    one out). The selector, combined verdict and policy are built from the folder exactly as
    the verify stage builds them."""
    import time

    from sciera.artifacts.card import read_card
    from sciera.llm.registry import make_llm
    from sciera.train.verifier_stages import copy_files, drop_from_folder, install
    from sciera.verify import calibration
    from sciera.verify.decider import DECIDER_FILE, prompt_version
    from sciera.verify.llm_verdict import CombinedVerdict
    from sciera.verify.trained import TrainedSelector

    job = run.job
    if job.decider is None:
        drop_from_folder(run, "decider", (DECIDER_FILE,))
        return
    config = job.decider
    llm = make_llm(run.settings)
    verdict = CombinedVerdict.from_settings(run.settings, llm=llm, model=str(run.model_dir))
    selector = TrainedSelector(network=verdict.model.network)
    policy = VerifyPolicy.from_card(verdict.card)
    questions = bioasq_questions(config.bioasq, config.abstracts)
    questions += pubmedqa_questions(run.data.pubmedqa_train)
    drawn = capped(questions, config.per_label, run.job.config.seed)
    rows = decider_rows(drawn, selector, verdict, policy, llm, lambda n, t: run.step(STEP, n, t))
    decider, report = fit_decider(rows, natural_counts(questions), seed=run.job.config.seed)
    card = read_card(run.model_dir) | run.head
    card["decider"] = {
        "file": DECIDER_FILE,
        "llm": llm.model_id,
        "prompt": f"decide_question@{prompt_version()}",
        "bioasq": str(config.bioasq),
        "per_label": config.per_label,
        "abstracts": config.abstracts,
        "natural": dict(zip(VERDICT_LABELS, natural_counts(questions), strict=True)),
        **report,
    }
    card["wall_seconds"] = time.monotonic() - run.started

    def save(folder: Path) -> None:
        copy_files(run.model_dir, folder, (DECIDER_FILE,))
        calibration.save(decider, folder / DECIDER_FILE)

    install(run.model_dir, run.work, card, save)
