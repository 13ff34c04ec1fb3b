"""How often the verify stage decides a question's judged passages (SSLI distractors).

A distractor (SSLI) is written to look relevant to its question without answering it, so
the verify stage should give it NOT ENOUGH INFO; a gold passage answers the question. From
a results record's ``verification`` (SciFact's prediction format: per document its label)
and the question's judgments and distractors, per question:

- ``distractor_decided``: (distractors given SUPPORT or CONTRADICT, distractors);
- ``gold_decided``: (gold documents given SUPPORT or CONTRADICT, gold documents).

A passage counts as its document (``"d#3"`` -> ``"d"``; a distractor's id is a document of
its own); one the stage did not verify counts as undecided (it gave no verdict). The run's
value pools over passages (decided / all, summed over the questions), not a mean of
per-question shares. A record without a verification (the question was not verified) or a
question without such passages is not scored (None).

Registered specs (``verdict`` kind, pooled over questions, with
:func:`~sciera.eval.metrics.evaluate.evaluate_verdicts`): ``distractor_decided``,
``gold_decided``.
"""

from __future__ import annotations

from collections.abc import Collection, Iterable, Mapping
from typing import Any

from sciera.eval.metrics.ranking import REL_THRESHOLD
from sciera.types import NOT_ENOUGH_INFO, document_of

Counts = tuple[int, int]
"""(decided, passages) of one question."""


def decided_counts(verification: Mapping[str, Any], passages: Iterable[str]) -> Counts:
    """(how many of ``passages``' documents the verification decided, how many documents)."""
    labels = verification.get("evidence") or {}
    docs = {document_of(p) for p in passages}
    decided = 0
    for doc in docs:
        label = (labels.get(doc) or {}).get("label", NOT_ENOUGH_INFO)
        decided += label != NOT_ENOUGH_INFO
    return decided, len(docs)


def _counts(rec: Mapping[str, Any], passages: Collection[str]) -> Counts | None:
    if "verification" not in rec or not passages:
        return None
    return decided_counts(rec["verification"], passages)


def distractor_decided(
    rec: Mapping[str, Any], qrels: Mapping[str, float], distractors: Collection[str]
) -> Counts | None:
    """The question's distractors decided (SUPPORT or CONTRADICT) and their number."""
    return _counts(rec, distractors)


def gold_decided(
    rec: Mapping[str, Any], qrels: Mapping[str, float], distractors: Collection[str]
) -> Counts | None:
    """The question's gold documents decided (SUPPORT or CONTRADICT) and their number."""
    return _counts(rec, [p for p, g in qrels.items() if g >= REL_THRESHOLD])


def pooled(counts: Iterable[Counts]) -> float:
    """Decided over all passages, summed over questions (0 when there are none)."""
    rows = list(counts)
    total = sum(n for _, n in rows)
    return sum(d for d, _ in rows) / total if total else 0.0
