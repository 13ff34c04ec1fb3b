"""Controlled corruptions of a reference answer, for checking judges (the judge sanity set).

Each corruption changes one thing a sound judge must notice, or must not reward:

- ``drop_finding``: the key finding's sentence removed (a one-sentence answer becomes
  :data:`NEUTRAL`, an on-topic sentence that says nothing);
- ``negate_finding``: the key finding negated by the first rule of :data:`FLIPS` that
  applies to its sentence (no rule applies: no pair for this question);
- ``unrelated_citation``: the key finding replaced by another question's finding, cited
  as "[1]" (a claim resting on an unrelated source);
- ``padded``: the whole answer, then neutral filler (:data:`FILLER`) up to twice its length
  (a judge must not prefer it: same content, more words).

The key finding is the sentence sharing the most content words with the question's
grounding text (its abstract), ties to the later sentence (conclusions come last).
"""

from __future__ import annotations

import re
from collections.abc import Sequence

KINDS: tuple[str, ...] = ("drop_finding", "negate_finding", "unrelated_citation", "padded")
HARMFUL: frozenset[str] = frozenset({"drop_finding", "negate_finding", "unrelated_citation"})
"""Corruptions the reference must beat; the others (``padded``) it must not lose to."""
NEUTRAL = "The available studies have examined this question."
FILLER: tuple[str, ...] = (
    "This is an important question in the field.",
    "Many researchers have studied related topics over the years.",
    "The details of each study are described in the literature.",
    "Further research may provide additional information.",
    "Readers may wish to consult the original publications.",
)
FLIPS: tuple[tuple[str, str], ...] = (
    (r"\b(did|does|do|was|were|is|are|could|can|should|may|might|will|would) not\b", r"\1"),
    (r"\bno significant\b", "a significant"),
    (r"\bnot associated\b", "associated"),
    (r"\bcannot\b", "can"),
    (r"\bincreases?\b", "reduces"),
    (r"\bincreased\b", "reduced"),
    (r"\b(reduces?|decreases?|lowers?)\b", "increases"),
    (r"\b(reduced|decreased|lowered)\b", "increased"),
    (r"\bhigher\b", "lower"),
    (r"\blower\b", "higher"),
    (r"\bimproved?\b", "worsened"),
    (r"\bimproves\b", "worsens"),
    (r"\b(is|are|was|were|may|can|could|should)\b", r"\1 not"),
)
_WORD = re.compile(r"[a-z0-9]+")
_STOP = frozenset(
    [
        "a",
        "an",
        "the",
        "of",
        "in",
        "on",
        "to",
        "and",
        "or",
        "for",
        "with",
        "by",
        "from",
        "at",
        "as",
        "is",
        "are",
        "was",
        "were",
        "be",
        "been",
        "this",
        "that",
        "these",
        "those",
        "it",
        "its",
        "we",
        "our",
        "study",
        "studies",
        "patients",
        "results",
        "there",
        "their",
        "than",
        "not",
    ]
)


def sentences(text: str) -> list[str]:
    from sciera.corpus.sentences import split_sentences

    return [s.strip() for s in split_sentences(text) if s.strip()]


def content_words(text: str) -> set[str]:
    return {w for w in _WORD.findall(text.lower()) if w not in _STOP and len(w) > 2}


def key_sentence(parts: Sequence[str], grounding: str) -> int:
    """Index of the sentence sharing the most content words with ``grounding``."""
    ground = content_words(grounding)
    scores = [len(content_words(s) & ground) for s in parts]
    best = max(scores)
    return max(i for i, s in enumerate(scores) if s == best)


def negate(sentence: str) -> str | None:
    """``sentence`` with its claim flipped by the first rule that applies, else None."""
    for pattern, repl in FLIPS:
        flipped, n = re.subn(pattern, repl, sentence, count=1, flags=re.IGNORECASE)
        if n:
            return flipped
    return None


def corrupt(kind: str, reference: str, grounding: str, other_finding: str) -> str | None:
    """The ``kind`` corruption of ``reference`` (None when it does not apply)."""
    parts = sentences(reference)
    if not parts:
        return None
    k = key_sentence(parts, grounding)
    if kind == "drop_finding":
        rest = parts[:k] + parts[k + 1 :]
        return " ".join(rest) if rest else NEUTRAL
    if kind == "negate_finding":
        flipped = negate(parts[k])
        return None if flipped is None else " ".join([*parts[:k], flipped, *parts[k + 1 :]])
    if kind == "unrelated_citation":
        if not other_finding.strip():
            return None
        cited = other_finding.strip().rstrip(".") + " [1]."
        return " ".join([*parts[:k], cited, *parts[k + 1 :]])
    if kind == "padded":
        target, words, filler = 2 * len(reference.split()), reference.split(), []
        i = 0
        while len(words) + sum(len(f.split()) for f in filler) < target:
            filler.append(FILLER[i % len(FILLER)])
            i += 1
        return " ".join([reference.strip(), *filler])
    raise ValueError(f"unknown corruption {kind!r} (choose from {', '.join(KINDS)})")
