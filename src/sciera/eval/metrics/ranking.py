"""Per-query ranking metrics with trec_eval semantics.

Every function takes one query's ranked list of document ids (best first, no
duplicates) and that query's judgments ``{doc_id: grade}``, and returns a float.

Conventions, identical to trec_eval 9 (as wrapped by pytrec_eval):

- A document is *relevant* when its grade is >= 1 (trec_eval's default
  ``rel_level``); grade 0 and negative grades are judged non-relevant.
- nDCG uses the grade itself as gain (no ``2**g - 1``), a ``log2(rank + 1)``
  discount, and an ideal ranking built from *all* judged documents with a
  positive grade, cut at the same K. Negative grades contribute no gain.
- MAP@K divides by the number of relevant documents in the judgments, not by
  the number retrieved in the top K (trec_eval ``map_cut``).
- Precision@K always divides by K, even when fewer than K documents were
  returned (trec_eval ``P``).
- A query whose judgments hold no relevant document scores 0 on every metric.
- ``k=None`` means no cutoff (trec_eval ``ndcg``, ``map``, ``recip_rank``).

To turn ``{doc_id: score}`` into a ranked list the way trec_eval does (score
descending, ties broken by doc id *descending*), use :func:`trec_order`.
"""

from __future__ import annotations

import hashlib
import math
from collections.abc import Mapping, Sequence

REL_THRESHOLD = 1
"""Smallest grade that counts as relevant for the binary metrics."""

Judgments = Mapping[str, float]


def trec_order(scores: Mapping[str, float]) -> list[str]:
    """Doc ids sorted as trec_eval sorts a run: score descending, then doc id descending."""
    return sorted(scores, key=lambda doc: (scores[doc], doc), reverse=True)


def neutral_order(qid: str, scores: Mapping[str, float]) -> list[str]:
    """Doc ids by score descending, ties in a pseudo-random order fixed by (qid, doc id).

    For runs over pools with injected distractors: trec_eval's doc-id order would put
    every ``ssli:...`` distractor above a tied corpus passage (and pool order would put
    it below), so either would bias HitRate, RP, NRS and CDR whenever scores tie.
    """

    def tiebreak(doc: str) -> bytes:
        return hashlib.blake2b(f"{qid}\x00{doc}".encode(), digest_size=8).digest()

    return sorted(scores, key=lambda doc: (-scores[doc], tiebreak(doc)))


def _cut(ranked: Sequence[str], k: int | None) -> Sequence[str]:
    return ranked if k is None else ranked[:k]


def _num_relevant(qrels: Judgments) -> int:
    return sum(1 for grade in qrels.values() if grade >= REL_THRESHOLD)


def _is_relevant(qrels: Judgments, doc: str) -> bool:
    return qrels.get(doc, 0) >= REL_THRESHOLD


def _dcg(gains: Sequence[float]) -> float:
    return sum(g / math.log2(i + 2) for i, g in enumerate(gains) if g > 0)


def ndcg(ranked: Sequence[str], qrels: Judgments, k: int | None = None) -> float:
    """Normalized discounted cumulative gain at K (trec_eval ``ndcg_cut_K``)."""
    gains = [qrels.get(doc, 0) for doc in _cut(ranked, k)]
    ideal = sorted((g for g in qrels.values() if g > 0), reverse=True)
    ideal_dcg = _dcg(_cut(ideal, k))
    return _dcg(gains) / ideal_dcg if ideal_dcg > 0 else 0.0


def average_precision(ranked: Sequence[str], qrels: Judgments, k: int | None = None) -> float:
    """Average precision over the top K, normalized by all relevant docs (``map_cut_K``)."""
    num_rel = _num_relevant(qrels)
    if num_rel == 0:
        return 0.0
    hits, total = 0, 0.0
    for i, doc in enumerate(_cut(ranked, k)):
        if _is_relevant(qrels, doc):
            hits += 1
            total += hits / (i + 1)
    return total / num_rel


def scored_average_precision(scores: Sequence[float], labels: Sequence[int]) -> float:
    """:func:`average_precision` of items ordered by ``scores`` (best first, ties in input
    order), relevant where ``labels`` is above 0."""
    order = sorted(range(len(scores)), key=lambda i: -float(scores[i]))
    relevant = {str(i): 1.0 for i, y in enumerate(labels) if y > 0}
    return average_precision([str(i) for i in order], relevant)


def reciprocal_rank(ranked: Sequence[str], qrels: Judgments, k: int | None = None) -> float:
    """1 / rank of the first relevant doc within the top K, else 0 (``recip_rank``)."""
    for i, doc in enumerate(_cut(ranked, k)):
        if _is_relevant(qrels, doc):
            return 1.0 / (i + 1)
    return 0.0


def recall(ranked: Sequence[str], qrels: Judgments, k: int) -> float:
    """Relevant docs in the top K / all relevant docs (``recall_K``)."""
    num_rel = _num_relevant(qrels)
    if num_rel == 0:
        return 0.0
    return sum(1 for doc in ranked[:k] if _is_relevant(qrels, doc)) / num_rel


def precision(ranked: Sequence[str], qrels: Judgments, k: int) -> float:
    """Relevant docs in the top K / K (``P_K``)."""
    return sum(1 for doc in ranked[:k] if _is_relevant(qrels, doc)) / k


def hit_rate(ranked: Sequence[str], qrels: Judgments, k: int) -> float:
    """1 if at least one relevant doc is among the first K, else 0 (SPEC HitRate@K).

    A list shorter than K counts what it has.
    """
    return 1.0 if any(_is_relevant(qrels, doc) for doc in ranked[:k]) else 0.0


def relative_position(ranked: Sequence[str], qrels: Judgments, n_candidates: int) -> float:
    """SPEC Relative Position in percent: ``100 * (N - r) / (N - 1)``.

    ``r`` is the 1-based rank of the best-placed relevant passage in ``ranked``
    (the final list, possibly shortened by filtering) and ``N`` the number of
    candidates the reranker was given. No relevant passage in the list gives 0.
    With ``N == 1`` the only possible placement, rank 1, gives 100.
    """
    if n_candidates < 1:
        raise ValueError(f"n_candidates must be >= 1, got {n_candidates}")
    if len(ranked) > n_candidates:
        raise ValueError(
            f"ranked list has {len(ranked)} items but only {n_candidates} candidates were given"
        )
    for i, doc in enumerate(ranked):
        if _is_relevant(qrels, doc):
            if n_candidates == 1:
                return 100.0
            return 100.0 * (n_candidates - (i + 1)) / (n_candidates - 1)
    return 0.0
