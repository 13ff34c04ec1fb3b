"""Robustness to semantically similar but logically irrelevant (SSLI) distractors.

Definitions (SPEC "Definitions fixed here"):

- **NRS@K** (Noise Robustness Score): share of non-distractor passages among the
  top K returned. The denominator is the number of passages actually returned
  within the top K (``min(K, len(ranked))``); an empty list scores 0 because it
  returns no useful passage.
- **CDR** (Context Discrimination Rate): share of (gold, distractor) pairs of the
  same question in which the gold passage is ranked above the distractor. A
  passage absent from the ranked list counts as ranked below every returned
  passage; when both passages of a pair are absent, the gold passage is *not*
  above the distractor, so the pair counts as a failure. Across queries CDR is
  pooled over pairs (total wins / total pairs), which is the SPEC's "share of
  pairs"; a question without gold or without distractors contributes no pair.
"""

from __future__ import annotations

from collections.abc import Collection, Sequence


def noise_robustness(ranked: Sequence[str], distractors: Collection[str], k: int = 5) -> float:
    """NRS@K: share of the (at most K) returned passages that are not distractors."""
    if k < 1:
        raise ValueError(f"k must be >= 1, got {k}")
    top = ranked[:k]
    if not top:
        return 0.0
    return sum(1 for pid in top if pid not in distractors) / len(top)


def discrimination_counts(
    ranked: Sequence[str], gold: Collection[str], distractors: Collection[str]
) -> tuple[int, int]:
    """(pairs won, pairs) over all (gold, distractor) pairs of one question.

    A pair is won when the gold passage is ranked strictly above the distractor;
    an absent passage ranks below every returned one.
    """
    absent = len(ranked)
    position = {pid: i for i, pid in enumerate(ranked)}
    overlap = set(gold) & set(distractors)
    if overlap:
        raise ValueError(f"passages marked both gold and distractor: {sorted(overlap)}")
    wins = 0
    for g in gold:
        g_pos = position.get(g, absent)
        wins += sum(1 for d in distractors if g_pos < position.get(d, absent))
    return wins, len(gold) * len(distractors)


def context_discrimination_rate(
    ranked: Sequence[str], gold: Collection[str], distractors: Collection[str]
) -> float:
    """CDR of one question; raises ValueError when it has no (gold, distractor) pair."""
    wins, pairs = discrimination_counts(ranked, gold, distractors)
    if pairs == 0:
        raise ValueError("CDR is undefined without at least one gold and one distractor passage")
    return wins / pairs
