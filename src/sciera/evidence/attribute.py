"""Attribute the sentences of a synthesized extract back to the passages they came from.

EviOmni-style extractors write one narrative over all passages; sciera keeps evidence
per passage so that every citation resolves to a passage id. Each sentence goes to the
passages it names explicitly ("[2]", "Passage 2"); otherwise to the passage sharing the
largest share of its content words (ties: the better-ranked passage). A sentence that
shares no content word with any passage is unsupported: it is dropped and counted.
"""

from __future__ import annotations

import re
from collections.abc import Sequence
from dataclasses import dataclass

from sciera.corpus.sentences import split_sentences
from sciera.types import Evidence, ScoredPassage

_MARKER = re.compile(
    r"\[(\d+(?:\s*[,;–-]\s*\d+)*)\]|\bpassages?\s+(\d+(?:\s*(?:,|and)\s*\d+)*)", re.I
)
_BRACKETS = re.compile(r"\s*\[\d+(?:\s*[,;–-]\s*\d+)*\]")
_WORD = re.compile(r"[^\W_]+")
_STOP_WORDS = (
    "a an the of in on at to for and or but with by from as is are was were be been being "
    "this that these those it its their there which who whom what when where how why not no "
    "than then so such into onto over under between among also may might can could would "
    "should will do does did has have had passage passages"
)
_STOP = frozenset(_STOP_WORDS.split())


@dataclass(frozen=True, slots=True)
class Attribution:
    evidence: tuple[Evidence, ...]
    unsupported: tuple[str, ...]  # sentences matching no passage (dropped)


def content_words(text: str) -> set[str]:
    return {w for w in _WORD.findall(text.casefold()) if w not in _STOP and len(w) > 1}


def _numbers(group: str) -> list[int]:
    out: list[int] = []
    for part in re.split(r"\s*(?:,|;|and)\s*", group.strip()):
        if re.fullmatch(r"\d+\s*[–-]\s*\d+", part):
            lo, hi = (int(x) for x in re.split(r"\s*[–-]\s*", part))
            out.extend(range(lo, min(hi, lo + 50) + 1))
        elif part.isdigit():
            out.append(int(part))
    return out


def named_passages(sentence: str, n: int) -> list[int]:
    """0-based indexes of the passages a sentence names ("[1]", "[1, 3]", "Passage 2")."""
    found: list[int] = []
    for m in _MARKER.finditer(sentence):
        for k in _numbers(m.group(1) or m.group(2)):
            if 1 <= k <= n and k - 1 not in found:
                found.append(k - 1)
    return found


def best_overlap(sentence: str, vocab: Sequence[set[str]]) -> int | None:
    words = content_words(_MARKER.sub(" ", sentence))
    if not words:
        return None
    shares = [len(words & v) / len(words) for v in vocab]
    best = max(range(len(shares)), key=lambda i: (shares[i], -i))
    return best if shares[best] > 0 else None


def attribute(extract: str, items: Sequence[ScoredPassage]) -> Attribution:
    """Per-passage evidence (in ranking order) from a narrative ``extract``."""
    vocab = [content_words(it.passage.contents) for it in items]
    per_passage: dict[int, list[str]] = {}
    unsupported: list[str] = []
    for sentence in split_sentences(extract.strip()) if extract.strip() else []:
        targets = named_passages(sentence, len(items))
        if not targets:
            best = best_overlap(sentence, vocab)
            targets = [] if best is None else [best]
        if not targets:
            unsupported.append(sentence)
            continue
        clean = _BRACKETS.sub("", sentence).strip()
        for t in targets:
            per_passage.setdefault(t, []).append(clean)
    evidence = tuple(
        Evidence(items[i].passage, items[i].score, " ".join(per_passage[i]))
        for i in sorted(per_passage)
    )
    return Attribution(evidence, tuple(unsupported))
