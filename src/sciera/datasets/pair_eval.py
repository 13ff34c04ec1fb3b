"""Labelled claim/evidence collections (HealthVer, COVID-Fact, Evidence Inference) as
experiment datasets.

    data = load_dataset("healthver", "../shared/data/healthver", split="dev")

Each :class:`~sciera.datasets.pairs.LabelledPair` of :func:`~sciera.datasets.pairs.load_pairs`
is one question, its id the pair id and its text the claim as the collection gives it (a
claim, not a question: the verifier reads it as one, support / contradict / neither), with:

- ``candidates``: one passage, ``<pair id>#0``, of one document whose id is the pair id:
  the evidence sentences joined by spaces; judged relevant (``unit="passage"``);
- ``sentences``: that document's sentence list, the collection's own evidence sentences, so
  the verifier reads exactly them;
- ``labels`` and the first reference answer: SUPPORT -> ``yes``, CONTRADICT -> ``no``,
  NOT ENOUGH INFO -> ``maybe`` (what the ``verdict`` generator answers), for
  ``yesno_accuracy`` and ``macro_f1``;
- ``question_types``: ``yesno`` for every pair;
- ``yesno_answers``: ``("yes", "no", "maybe")`` for HealthVer (it has Neutral),
  ``("yes", "no")`` for COVID-Fact and Evidence Inference (no NOT ENOUGH INFO), so the
  runner asks for yes or no.

``split`` is the pair loader's own (``train`` or ``dev``, and Evidence Inference's
``lockbox``, its test articles: the table in ``docs/verify.md``); ``None`` loads every pair.
"""

from __future__ import annotations

from collections.abc import Sequence
from pathlib import Path

from sciera.datasets.loaders import EvalDataset
from sciera.datasets.pairs import LabelledPair, load_pairs
from sciera.errors import InputError, ScieraError
from sciera.types import CONTRADICT, NOT_ENOUGH_INFO, SUPPORT, Passage

ANSWERS = {SUPPORT: "yes", CONTRADICT: "no", NOT_ENOUGH_INFO: "maybe"}
"""A verdict label -> the yes/no/maybe answer the ``verdict`` generator gives for it."""
SPLITS = {
    "healthver": ("train", "dev"),
    "covidfact": ("train", "dev"),
    "evidence_inference": ("train", "dev", "lockbox"),
}
"""The splits each collection has (only Evidence Inference has a lockbox: its test
articles, for reported numbers only)."""


def pairs_dataset(
    name: str, pairs: Sequence[LabelledPair], yesno_answers: tuple[str, ...]
) -> EvalDataset:
    """An :class:`EvalDataset` with one question per pair (the module docstring's fields);
    a repeated pair id, or a label whose answer is not in ``yesno_answers``, is an error."""
    queries, qrels, answers, cands, labels, sentences = {}, {}, {}, {}, {}, {}
    for pair in pairs:
        answer = ANSWERS.get(pair.label)
        if answer is None or answer not in yesno_answers:
            raise ScieraError(
                f"{name}: pair {pair.id}: label: {pair.label!r} is not one of "
                f"{', '.join(k for k, v in ANSWERS.items() if v in yesno_answers)}"
            )
        if pair.id in queries:
            raise ScieraError(f"{name}: pair {pair.id}: id: the id appears more than once")
        passage = Passage(f"{pair.id}#0", pair.id, 0, "", " ".join(pair.evidence))
        queries[pair.id] = pair.claim
        cands[pair.id] = (passage,)
        qrels[pair.id] = {passage.passage_id: 1}
        labels[pair.id] = answer
        answers[pair.id] = (answer,)
        sentences[pair.id] = {pair.id: ("", tuple(pair.evidence))}
    return EvalDataset(
        name,
        "passage",
        queries,
        qrels,
        answers,
        cands,
        labels=labels,
        sentences=sentences,
        question_types=dict.fromkeys(queries, "yesno"),
        yesno_answers=yesno_answers,
    )


def _load(source: str, path: Path, split: str | None, yesno: tuple[str, ...]) -> EvalDataset:
    if split is not None and split not in SPLITS[source]:
        known = " or ".join(SPLITS[source])
        raise InputError(str(path), None, "split", f"{split!r} is not {known}")
    pairs = load_pairs(source, path, split=split)
    return pairs_dataset(f"{source}/{split or 'all'}", pairs, yesno)


def load_healthver(path: Path, *, split: str | None = None) -> EvalDataset:
    """HealthVer's pairs (``healthver_dev.csv`` train, ``healthver_test.csv`` dev)."""
    return _load("healthver", path, split, ("yes", "no", "maybe"))


def load_covidfact(path: Path, *, split: str | None = None) -> EvalDataset:
    """COVID-Fact's pairs (dev: 20% of its sources by hash); yes or no, no maybe."""
    return _load("covidfact", path, split, ("yes", "no"))


def load_evidence_inference(path: Path, *, split: str | None = None) -> EvalDataset:
    """Evidence Inference's claims (three per annotated prompt, one SUPPORT; splits by
    article: train, dev, lockbox); yes or no, no maybe."""
    return _load("evidence_inference", path, split, ("yes", "no"))
