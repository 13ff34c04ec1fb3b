"""BioASQ exact-answer metrics: yes/no accuracy and macro-F1, factoid, list.

Semantics follow the official BioASQ Task B (phase B) evaluation, with answers
compared after :func:`~sciera.text.normalize_text` (so case,
punctuation and articles do not matter); a string that normalizes to nothing
never matches.

Shapes:

- **yes/no**: a prediction and a gold answer are label strings (a predicted
  exact answer may be a sequence: it is a label only when it holds one item, see
  :func:`label_of`). Accuracy is a
  per-question metric; macro-F1 (:func:`macro_f1`) is a corpus-level one: the
  mean over a label set (``("yes", "no")`` for BioASQ, ``("yes", "no",
  "maybe")`` for PubMedQA) of each label's F1 = 2TP / (2TP + FP + FN). A label
  absent from both the gold and the predicted labels has F1 = 0, as in the
  official scorer. A prediction outside the label set (a refusal, an empty
  string) is a miss for its gold label and a false positive of no label.
  :func:`yesno_macro_f1` picks the label set from the gold labels (with
  ``"maybe"`` among them, PubMedQA's).
- **factoid**: the prediction is a ranked sequence of entity strings, of which
  the first :data:`FACTOID_MAX_ANSWERS` count; the gold answer is one entity
  given as its synonyms (a sequence of strings, or one string). Strict accuracy:
  the first predicted entity matches a synonym; lenient accuracy: any of the
  first five does; reciprocal rank: 1 / rank of the first match, 0 if none.
  A question with several gold entities is several references: with
  ``evaluate_answers`` the best one is kept, which is the official "any gold
  entity" rule.
- **list**: the prediction is a sequence of entity strings; the gold answer is a
  sequence of entities, each a sequence of synonyms (the BioASQ JSON shape
  ``[["a", "a2"], ["b"]]``; a bare string entity is rejected so that a
  mis-nested gold list fails loudly). Predicted entities that normalize to the
  same string are counted once, and ones that normalize to nothing are dropped.
  Each predicted entity, in order, is matched to the first still-unmatched gold
  entity having it as a synonym; a gold entity is matched at most once, so a
  second synonym of an already found entity is a false positive (as in the
  official scorer). Precision = matches / distinct
  predicted entities, recall = matches / gold entities, F1 their harmonic mean;
  an empty prediction scores 0 on all three. The corpus figures are means over
  questions. With ``evaluate_answers``, whose reference lists hold alternative
  gold answers, a list question's reference is ``[gold]``, e.g.
  ``{"q1": [[["a", "a2"], ["b"]]]}``.

Registered specs (``answer`` kind, scoring the structured exact answer when a
run recorded one): ``yesno_accuracy``, ``factoid_strict``, ``factoid_lenient``,
``factoid_mrr``, ``list_precision``, ``list_recall``, ``list_f1``; (``label``
kind, corpus-level over gold labels): ``macro_f1`` (:func:`yesno_macro_f1`).
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass

from sciera.text import normalize_text

FACTOID_MAX_ANSWERS = 5
"""BioASQ accepts up to five ranked entities per factoid question; later ones are ignored."""

YESNO_LABELS: tuple[str, ...] = ("yes", "no")
PUBMEDQA_LABELS: tuple[str, ...] = ("yes", "no", "maybe")


@dataclass(frozen=True, slots=True)
class ListScores:
    """One list question's precision, recall and F1 (see the module docstring)."""

    precision: float
    recall: float
    f1: float


def _entities(prediction: str | Sequence[str]) -> list[str]:
    """Normalized predicted entities in order; a bare string is one entity."""
    items = [prediction] if isinstance(prediction, str) else list(prediction)
    for item in items:
        if not isinstance(item, str):
            raise TypeError(f"a predicted entity must be a string, got {item!r}")
    return [normalize_text(item) for item in items]


def _synonyms(entity: str | Sequence[str]) -> frozenset[str]:
    """Normalized, non-empty synonyms of one gold entity; a bare string is one synonym."""
    names = [entity] if isinstance(entity, str) else list(entity)
    if not names:
        raise ValueError("a gold entity needs at least one synonym")
    return frozenset(n for n in map(normalize_text, names) if n)


# --- yes/no ---------------------------------------------------------------------------------


def label_of(prediction: str | Sequence[str]) -> str:
    """A predicted label: a string as is; an exact answer (sequence) only when it holds one
    item, else ``""`` (an empty or multi-entity exact answer is no label)."""
    if isinstance(prediction, str):
        return prediction
    items = list(prediction)
    return str(items[0]) if len(items) == 1 else ""


def yesno_accuracy(prediction: str | Sequence[str], reference: str) -> float:
    """1.0 when the predicted label equals the gold label after normalization, else 0.0."""
    pred = normalize_text(label_of(prediction))
    return 1.0 if pred and pred == normalize_text(reference) else 0.0


def _label_set(labels: Sequence[str]) -> list[str]:
    normalized = [normalize_text(label) for label in labels]
    if not normalized or "" in normalized or len(set(normalized)) != len(normalized):
        raise ValueError(f"labels must be distinct non-empty strings, got {list(labels)!r}")
    return normalized


def class_f1(gold: Sequence[str], predicted: Sequence[str], label: str) -> float:
    """F1 of one label over a corpus: 2TP / (2TP + FP + FN); 0 when TP = 0."""
    target = normalize_text(label)
    pairs = [(normalize_text(g), normalize_text(p)) for g, p in zip(gold, predicted, strict=True)]
    tp = sum(g == target and p == target for g, p in pairs)
    fp = sum(g != target and p == target for g, p in pairs)
    fn = sum(g == target and p != target for g, p in pairs)
    return 2 * tp / (2 * tp + fp + fn) if tp else 0.0


def macro_f1(
    gold: Sequence[str], predicted: Sequence[str], labels: Sequence[str] = YESNO_LABELS
) -> float:
    """Corpus-level macro-F1: the mean of :func:`class_f1` over ``labels``.

    ``gold`` and ``predicted`` are aligned label sequences (one per question).
    Every gold label must be in ``labels``; a predicted label outside them is
    simply wrong. A label absent from both sides contributes F1 = 0.
    """
    label_set = _label_set(labels)
    if len(gold) != len(predicted):
        raise ValueError(f"{len(gold)} gold labels but {len(predicted)} predictions")
    if not gold:
        raise ValueError("no question to evaluate")
    unknown = sorted(set(map(normalize_text, gold)) - set(label_set))
    if unknown:
        raise ValueError(f"gold labels {unknown} are not in the label set {label_set}")
    return sum(class_f1(gold, predicted, label) for label in label_set) / len(label_set)


def yesno_macro_f1(gold: Sequence[str], predicted: Sequence[str]) -> float:
    """:func:`macro_f1` over yes/no/maybe when any gold label is ``"maybe"``, else yes/no."""
    maybe = any(normalize_text(g) == "maybe" for g in gold)
    return macro_f1(gold, predicted, PUBMEDQA_LABELS if maybe else YESNO_LABELS)


# --- factoid --------------------------------------------------------------------------------


def factoid_rank(prediction: str | Sequence[str], reference: str | Sequence[str]) -> int | None:
    """1-based rank of the first of the first five predicted entities matching a gold synonym."""
    synonyms = _synonyms(reference)
    for rank, entity in enumerate(_entities(prediction)[:FACTOID_MAX_ANSWERS], start=1):
        if entity in synonyms:
            return rank
    return None


def factoid_strict(prediction: str | Sequence[str], reference: str | Sequence[str]) -> float:
    """Strict accuracy: 1.0 when the first predicted entity is the gold entity (or a synonym)."""
    return 1.0 if factoid_rank(prediction, reference) == 1 else 0.0


def factoid_lenient(prediction: str | Sequence[str], reference: str | Sequence[str]) -> float:
    """Lenient accuracy: 1.0 when the gold entity is among the first five predicted."""
    return 0.0 if factoid_rank(prediction, reference) is None else 1.0


def factoid_mrr(prediction: str | Sequence[str], reference: str | Sequence[str]) -> float:
    """Reciprocal rank of the gold entity among the first five predicted, 0.0 if absent."""
    rank = factoid_rank(prediction, reference)
    return 0.0 if rank is None else 1.0 / rank


# --- list -----------------------------------------------------------------------------------


def list_scores(prediction: str | Sequence[str], reference: Sequence[Sequence[str]]) -> ListScores:
    """Precision, recall and F1 of a predicted entity list against the gold entities."""
    if isinstance(reference, str):
        raise TypeError("a list gold answer is a sequence of entities, not a string")
    gold: list[frozenset[str]] = []
    for entity in reference:
        if isinstance(entity, str):
            raise TypeError(
                f"gold entity {entity!r} must be a list of synonyms, e.g. [{entity!r}] "
                "(with evaluate_answers, wrap a list question's gold answer: {qid: [gold]})"
            )
        gold.append(_synonyms(entity))
    if not gold:
        raise ValueError("a list gold answer needs at least one entity")
    predicted = list(dict.fromkeys(e for e in _entities(prediction) if e))
    if not predicted:
        return ListScores(0.0, 0.0, 0.0)
    unmatched = list(range(len(gold)))
    matches = 0
    for entity in predicted:
        hit = next((i for i in unmatched if entity in gold[i]), None)
        if hit is not None:
            unmatched.remove(hit)
            matches += 1
    if matches == 0:
        return ListScores(0.0, 0.0, 0.0)
    p, r = matches / len(predicted), matches / len(gold)
    return ListScores(p, r, 2 * p * r / (p + r))


def list_precision(prediction: str | Sequence[str], reference: Sequence[Sequence[str]]) -> float:
    return list_scores(prediction, reference).precision


def list_recall(prediction: str | Sequence[str], reference: Sequence[Sequence[str]]) -> float:
    return list_scores(prediction, reference).recall


def list_f1(prediction: str | Sequence[str], reference: Sequence[Sequence[str]]) -> float:
    return list_scores(prediction, reference).f1
