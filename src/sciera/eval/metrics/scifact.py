"""SciFact's claim-verification metrics (Wadden et al. 2020), as ../shared/SPEC.md fixes them.

Gold claims and predictions are read by :mod:`sciera.datasets.claims`: SciFact's format
(``claims_train.jsonl``)::

    {"id": 52, "claim": "...", "cited_doc_ids": [11, 15],
     "evidence": {"11": [{"sentences": [0, 1], "label": "SUPPORT"},
                         {"sentences": [11], "label": "SUPPORT"}],
                  "15": [{"sentences": [4], "label": "SUPPORT"}]}}

and predictions in SciFact's prediction format, one per claim::

    {"id": 52, "evidence": {"11": {"label": "SUPPORT", "sentences": [1, 11, 13]},
                            "16": {"label": "CONTRADICT", "sentences": [18, 20]}}}

A gold abstract (a key of ``evidence``) has one label and one or more rationale
sets (sentence indices into the abstract's sentence list); an abstract cited but
without evidence is NOT ENOUGH INFO and is no gold abstract. Counts are summed
over all claims, then precision = correct / predicted, recall = correct / gold,
F1 their harmonic mean (0 when a denominator or both P and R are 0):

- **abstract level**: every predicted (claim, abstract) whose label is SUPPORT or
  CONTRADICT is one prediction; a prediction labelled NOT ENOUGH INFO counts as
  no prediction (neither predicted nor correct). Gold = gold (claim, abstract)
  pairs. *Label-only*: correct when the abstract is gold evidence for the claim and
  the label matches. *Rationalized*: also the first :data:`MAX_ABSTRACT_SENTS`
  predicted sentences (in the order given) contain every sentence of at least one
  gold rationale set (so a gold set of 4 sentences can never rationalize alone:
  the paper's rule, not the later leaderboard's relaxation).
- **sentence level**: every predicted sentence of a non-NEI prediction is one
  prediction (all of them, not only the first 3); gold = the sentences of all gold
  rationale sets. *Selection*: a predicted sentence is correct when the abstract
  is gold evidence and the sentence belongs to a gold rationale set all of whose
  sentences are predicted for that abstract. *Selection+label*: also the
  abstract's predicted label equals the gold label.

Doc ids and claim ids are compared as strings (``13734012`` and ``"13734012"`` are
one abstract). A gold claim without a prediction is scored as predicting nothing;
a prediction for a claim not among the gold claims is an error. Malformed records
raise :class:`~sciera.errors.InputError` naming the source, the claim and the field.

Registered specs (``verification`` kind, corpus-level over claims, with
:func:`~sciera.eval.metrics.evaluate.evaluate_verification`):
``abstract_label_only_{precision,recall,f1}``, ``abstract_rationalized_*``,
``sentence_selection_*``, ``sentence_label_*``.
"""

from __future__ import annotations

from collections.abc import Callable, Iterable, Mapping, Sequence
from dataclasses import dataclass
from typing import Any

from sciera.datasets.claims import (
    NEI,
    ClaimPrediction,
    GoldAbstract,
    GoldClaim,
    _unique,
    parse_gold,
    parse_prediction,
)

MAX_ABSTRACT_SENTS = 3
"""Abstract-level rationalized scoring reads only this many predicted sentences."""

LEVELS: tuple[str, ...] = (
    "abstract_label_only",
    "abstract_rationalized",
    "sentence_selection",
    "sentence_label",
)
"""The four official scores; each has ``_precision``, ``_recall`` and ``_f1``."""


@dataclass(frozen=True, slots=True)
class Score:
    """Precision, recall and F1 from counts (0 where undefined)."""

    correct: int
    predicted: int
    gold: int

    @property
    def precision(self) -> float:
        return self.correct / self.predicted if self.predicted else 0.0

    @property
    def recall(self) -> float:
        return self.correct / self.gold if self.gold else 0.0

    @property
    def f1(self) -> float:
        p, r = self.precision, self.recall
        return 2 * p * r / (p + r) if p + r else 0.0


@dataclass(frozen=True, slots=True)
class Counts:
    """The evaluator's counts, summed over claims (``+`` adds two)."""

    abstract_gold: int = 0
    abstract_predicted: int = 0
    abstract_label_only: int = 0
    abstract_rationalized: int = 0
    sentence_gold: int = 0
    sentence_predicted: int = 0
    sentence_selection: int = 0
    sentence_label: int = 0

    def __add__(self, other: Counts) -> Counts:
        return Counts(*(a + b for a, b in zip(_fields(self), _fields(other), strict=True)))

    def score(self, level: str) -> Score:
        """The :class:`Score` of one of :data:`LEVELS`."""
        if level not in LEVELS:
            raise ValueError(f"unknown SciFact level {level!r}; choose from {', '.join(LEVELS)}")
        if level.startswith("abstract"):
            return Score(getattr(self, level), self.abstract_predicted, self.abstract_gold)
        return Score(getattr(self, level), self.sentence_predicted, self.sentence_gold)

    def metrics(self) -> dict[str, float]:
        """``{level_precision, level_recall, level_f1}`` for the four levels."""
        out: dict[str, float] = {}
        for level in LEVELS:
            s = self.score(level)
            out |= {
                f"{level}_precision": s.precision,
                f"{level}_recall": s.recall,
                f"{level}_f1": s.f1,
            }
        return out


def _fields(c: Counts) -> tuple[int, ...]:
    return (
        c.abstract_gold,
        c.abstract_predicted,
        c.abstract_label_only,
        c.abstract_rationalized,
        c.sentence_gold,
        c.sentence_predicted,
        c.sentence_selection,
        c.sentence_label,
    )


# --- counting --------------------------------------------------------------------------------


def _gold_claims(gold: Iterable[GoldClaim | Mapping[str, Any]]) -> list[GoldClaim]:
    out = [g if isinstance(g, GoldClaim) else parse_gold(g) for g in gold]
    _unique([g.id for g in out], "<gold>")
    return out


def _predictions(
    predictions: Iterable[ClaimPrediction | Mapping[str, Any]],
) -> dict[str, ClaimPrediction]:
    preds = [p if isinstance(p, ClaimPrediction) else parse_prediction(p) for p in predictions]
    _unique([p.id for p in preds], "<predictions>")
    return {p.id: p for p in preds}


def _known(
    claims: Sequence[GoldClaim], preds: dict[str, ClaimPrediction]
) -> dict[str, ClaimPrediction]:
    """``preds``, refused when one is for a claim that is not among the gold ``claims``."""
    unknown = sorted(set(preds) - {c.id for c in claims})
    if unknown:
        shown = ", ".join(unknown[:5]) + (" ..." if len(unknown) > 5 else "")
        raise ValueError(f"predictions for claims not in the gold claims: {shown}")
    return preds


def correct_sentences(gold: GoldAbstract, predicted: Iterable[int]) -> set[int]:
    """The predicted sentences that belong to a gold rationale set all of whose sentences
    are predicted."""
    pred = set(predicted)
    return {ix for ix in pred if any(ix in r and r <= pred for r in gold.rationales)}


def is_rationalized(gold: GoldAbstract, predicted: Sequence[int]) -> bool:
    """Whether the first :data:`MAX_ABSTRACT_SENTS` predicted sentences hold a whole gold
    rationale set."""
    first = set(predicted[:MAX_ABSTRACT_SENTS])
    return any(r <= first for r in gold.rationales)


def claim_counts(gold: GoldClaim, prediction: ClaimPrediction | None) -> Counts:
    """The evaluator's counts for one claim (``None``: nothing predicted)."""
    abstract_gold = len(gold.evidence)
    sentence_gold = sum(len(r) for g in gold.evidence.values() for r in g.rationales)
    predicted = correct_label = rationalized = 0
    sent_predicted = sent_selection = sent_label = 0
    for doc, pred in (prediction.evidence if prediction else {}).items():
        if pred.label == NEI:
            continue
        predicted += 1
        sent_predicted += len(pred.sentences)
        truth = gold.evidence.get(doc)
        if truth is None:
            continue
        label_ok = pred.label == truth.label
        n_correct = len(correct_sentences(truth, pred.sentences))
        sent_selection += n_correct
        if label_ok:
            correct_label += 1
            rationalized += is_rationalized(truth, pred.sentences)
            sent_label += n_correct
    return Counts(
        abstract_gold,
        predicted,
        correct_label,
        rationalized,
        sentence_gold,
        sent_predicted,
        sent_selection,
        sent_label,
    )


def scifact_counts(
    gold: Iterable[GoldClaim | Mapping[str, Any]],
    predictions: Iterable[ClaimPrediction | Mapping[str, Any]],
) -> Counts:
    """Counts summed over every gold claim (records or parsed objects on either side)."""
    claims = _gold_claims(gold)
    preds = _known(claims, _predictions(predictions))
    if not claims:
        raise ValueError("no claim to evaluate")
    total = Counts()
    for claim in claims:
        total = total + claim_counts(claim, preds.get(claim.id))
    return total


def per_claim_counts(
    gold: Iterable[GoldClaim | Mapping[str, Any]],
    predictions: Iterable[ClaimPrediction | Mapping[str, Any]],
) -> dict[str, Counts]:
    """Each gold claim's counts by claim id (a claim without a prediction predicted
    nothing): what a paired test of a corpus-level score swaps between two systems."""
    preds = _predictions(predictions)
    return {c.id: claim_counts(c, preds.get(c.id)) for c in _gold_claims(gold)}


def scifact_metrics(
    gold: Iterable[GoldClaim | Mapping[str, Any]],
    predictions: Iterable[ClaimPrediction | Mapping[str, Any]],
) -> dict[str, float]:
    """All twelve numbers: ``{level}_{precision,recall,f1}`` for each of :data:`LEVELS`."""
    return scifact_counts(gold, predictions).metrics()


def off_evidence_share(
    gold: Iterable[GoldClaim | Mapping[str, Any]],
    predictions: Iterable[ClaimPrediction | Mapping[str, Any]],
) -> float:
    """Of the abstracts predicted SUPPORT or CONTRADICT over all claims, the share that is
    not evidence for its claim (not in its gold ``evidence``: an abstract cited for a NOT
    ENOUGH INFO claim is not evidence); 0 when nothing is predicted. Not an official SciFact
    number: it splits label-only precision's misses into decisions on related, non-deciding
    abstracts (this share) and wrong directions on evidence."""
    claims = _gold_claims(gold)
    evidence = {c.id: c.evidence for c in claims}
    decided = off = 0
    for cid, pred in _known(claims, _predictions(predictions)).items():
        for doc, p in pred.evidence.items():
            if p.label != NEI:
                decided += 1
                off += doc not in evidence[cid]
    return off / decided if decided else 0.0


def claim_outcomes(
    gold: Iterable[GoldClaim | Mapping[str, Any]],
    predictions: Iterable[Mapping[str, Any]],
) -> list[tuple[str, str]]:
    """(gold claim-level label, predicted overall label) per gold claim with a prediction.
    A prediction is a SciFact prediction record that also carries the claim's overall
    verdict as ``label`` (``eval run`` adds it from each record's ``verify``)."""
    claims = _gold_claims(gold)
    records = list(predictions)
    ids = _known(claims, _predictions(records))  # parsed as the counts parse them, in order
    labels = {c.id: c.label for c in claims}
    out = []
    for cid, rec in zip(ids, records, strict=True):
        if not rec.get("label"):
            raise ValueError(f"claim {cid}: the prediction has no overall label (`label`)")
        out.append((labels[cid], str(rec["label"])))
    return out


def claim_refused(
    gold: Iterable[GoldClaim | Mapping[str, Any]], predictions: Iterable[Mapping[str, Any]]
) -> float:
    """Of the claims with gold evidence (answerable), the share whose overall verdict is NOT
    ENOUGH INFO (0 when none is answerable)."""
    answerable = [p for g, p in claim_outcomes(gold, predictions) if g != NEI]
    return sum(p == NEI for p in answerable) / len(answerable) if answerable else 0.0


def claim_precision(
    gold: Iterable[GoldClaim | Mapping[str, Any]], predictions: Iterable[Mapping[str, Any]]
) -> float:
    """Of the claims given an overall verdict other than NOT ENOUGH INFO, the share whose
    verdict is the gold claim-level label (CONFLICTING counts as a decision; 0 when none is
    decided)."""
    decided = [(g, p) for g, p in claim_outcomes(gold, predictions) if p != NEI]
    return sum(g == p for g, p in decided) / len(decided) if decided else 0.0


def level_metric(level: str, stat: str) -> Callable[..., float]:
    """A function (gold claims, predictions) -> one number: ``stat`` (``precision``,
    ``recall`` or ``f1``) of ``level`` (one of :data:`LEVELS`)."""
    if level not in LEVELS or stat not in ("precision", "recall", "f1"):
        raise ValueError(f"no SciFact metric {level}_{stat}")

    def compute(
        gold: Iterable[GoldClaim | Mapping[str, Any]],
        predictions: Iterable[ClaimPrediction | Mapping[str, Any]],
    ) -> float:
        return float(getattr(scifact_counts(gold, predictions).score(level), stat))

    compute.__name__ = f"{level}_{stat}"
    compute.__doc__ = f"SciFact {level.replace('_', ' ')} {stat} over all claims."
    return compute


abstract_label_only_f1 = level_metric("abstract_label_only", "f1")
abstract_rationalized_f1 = level_metric("abstract_rationalized", "f1")
sentence_selection_f1 = level_metric("sentence_selection", "f1")
sentence_label_f1 = level_metric("sentence_label", "f1")
