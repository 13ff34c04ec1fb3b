"""Answer metrics: EM, token P/R/F1, ROUGE-L, ROUGE-SU4 (the evidence's compression
ratio is :func:`sciera.text.compression_ratio`).

EM and the token metrics share :func:`sciera.text.normalize_text` (SQuAD normalization:
lowercase, drop ASCII punctuation, drop the articles a/an/the, collapse
whitespace). When both the prediction and the reference normalize to nothing,
the token metrics are 1 (SQuAD 2.0 convention); when only one does, they are 0.

ROUGE works on :func:`rouge_tokens` (lowercased runs of Unicode letters and
digits, no stemming) and reports the F-measure with beta = 1; an empty side
gives 0. ROUGE-SU4 counts skip-bigrams with at most 4 words between the pair,
plus unigrams (ROUGE-1.5.5 ``-2 4 -u``).
"""

from __future__ import annotations

import re
from collections import Counter
from collections.abc import Hashable, Sequence
from dataclasses import dataclass

from sciera.text import normalize_text

_ROUGE_TOKEN = re.compile(r"[^\W_]+")


@dataclass(frozen=True, slots=True)
class TokenScores:
    precision: float
    recall: float
    f1: float


def exact_match(prediction: str, reference: str) -> float:
    """1.0 when both strings are equal after :func:`normalize_text`, else 0.0."""
    return 1.0 if normalize_text(prediction) == normalize_text(reference) else 0.0


def token_scores(prediction: str, reference: str) -> TokenScores:
    """Unigram precision, recall and F1 over normalized tokens (bag of words with counts)."""
    pred = normalize_text(prediction).split()
    ref = normalize_text(reference).split()
    if not pred or not ref:
        same = 1.0 if pred == ref else 0.0
        return TokenScores(same, same, same)
    common = sum((Counter(pred) & Counter(ref)).values())
    if common == 0:
        return TokenScores(0.0, 0.0, 0.0)
    p, r = common / len(pred), common / len(ref)
    return TokenScores(p, r, 2 * p * r / (p + r))


def token_f1(prediction: str, reference: str) -> float:
    return token_scores(prediction, reference).f1


def token_precision(prediction: str, reference: str) -> float:
    return token_scores(prediction, reference).precision


def token_recall(prediction: str, reference: str) -> float:
    return token_scores(prediction, reference).recall


def rouge_tokens(text: str) -> list[str]:
    """Lowercased runs of letters and digits; punctuation and underscores separate tokens."""
    return _ROUGE_TOKEN.findall(text.lower())


def lcs_length(a: Sequence[Hashable], b: Sequence[Hashable]) -> int:
    """Length of the longest common subsequence (dynamic programming, two rows)."""
    if len(a) < len(b):
        a, b = b, a
    prev = [0] * (len(b) + 1)
    for x in a:
        cur = [0]
        for j, y in enumerate(b):
            cur.append(prev[j] + 1 if x == y else max(prev[j + 1], cur[j]))
        prev = cur
    return prev[-1]


def _f_measure(matches: float, n_pred: int, n_ref: int) -> float:
    if matches == 0 or n_pred == 0 or n_ref == 0:
        return 0.0
    p, r = matches / n_pred, matches / n_ref
    return 2 * p * r / (p + r)


def rouge_l(prediction: str, reference: str) -> float:
    """ROUGE-L F-measure: LCS-based precision and recall, beta = 1."""
    pred, ref = rouge_tokens(prediction), rouge_tokens(reference)
    return _f_measure(lcs_length(pred, ref), len(pred), len(ref))


def _skip_units(tokens: Sequence[str], max_skip: int) -> Counter[tuple[str, ...]]:
    units: Counter[tuple[str, ...]] = Counter((t,) for t in tokens)
    for i, first in enumerate(tokens):
        for j in range(i + 1, min(len(tokens), i + max_skip + 2)):
            units[(first, tokens[j])] += 1
    return units


def rouge_su(prediction: str, reference: str, max_skip: int = 4) -> float:
    """ROUGE-SU F-measure: skip-bigrams with at most ``max_skip`` words between, plus unigrams."""
    if max_skip < 0:
        raise ValueError(f"max_skip must be >= 0, got {max_skip}")
    pred = _skip_units(rouge_tokens(prediction), max_skip)
    ref = _skip_units(rouge_tokens(reference), max_skip)
    matches = sum((pred & ref).values())
    return _f_measure(matches, sum(pred.values()), sum(ref.values()))


def rouge_su4(prediction: str, reference: str) -> float:
    """ROUGE-SU4 F-measure (the BioASQ ideal-answer metric)."""
    return rouge_su(prediction, reference, max_skip=4)
