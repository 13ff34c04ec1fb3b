"""Sentence-preserving chunking of documents into passages of at most ``max_words`` words.

Words are maximal runs of non-space characters (what ``str.split()`` returns).
Sentences are packed greedily, in order, into a passage while its body stays
within ``max_words``; only a sentence longer than the limit is cut, on word
boundaries, into pieces of ``max_words`` words (the last piece may be shared
with the following sentences). The limit counts the passage *body* only: the
title is not counted (``Passage.contents`` prepends it when indexing or showing
a passage). Each passage body is an exact substring of the document text, and
the output depends only on the text and ``max_words``.
"""

from __future__ import annotations

import re
from collections.abc import Iterator
from itertools import pairwise

from sciera.corpus.sentences import sentence_spans
from sciera.types import Document, Passage

DEFAULT_MAX_WORDS = 250
_WORD = re.compile(r"\S+")
_SPACE = re.compile(r"\s")


def _segments(text: str) -> list[tuple[int, int]]:
    """Sentences as consecutive character ranges that together cover ``text``.

    Each cut sits on whitespace (or a text edge), so every word lies in exactly one
    segment: a word belongs to the sentence in which it starts, and a sentence
    boundary that falls inside a word (``"(ref. ).Here"``) never splits it.
    """
    cuts = [0]
    for start, _ in sentence_spans(text)[1:]:
        cut = start
        if not text[cut - 1].isspace():
            space = _SPACE.search(text, cut)
            cut = space.start() if space else len(text)
        if cut > cuts[-1]:
            cuts.append(cut)
    cuts.append(len(text))
    return [(a, b) for a, b in pairwise(cuts) if a < b]


def _units(text: str, max_words: int) -> Iterator[tuple[int, int, int]]:
    """``(start, end, words)`` of each sentence, sentences over the limit cut in pieces."""
    for a, b in _segments(text):
        count = len(text[a:b].split())
        if count <= max_words:
            if count:
                yield a, b, count
            continue
        words = [m.span() for m in _WORD.finditer(text, a, b)]
        for i in range(0, count, max_words):
            piece = words[i : i + max_words]
            yield piece[0][0], piece[-1][1], len(piece)


def chunk_spans(text: str, max_words: int = DEFAULT_MAX_WORDS) -> list[tuple[int, int]]:
    """Character spans of the passages of ``text`` (no leading or trailing spaces)."""
    if max_words < 1:
        raise ValueError(f"max_words must be at least 1, got {max_words}")
    packed: list[list[int]] = []  # [start, end, words]
    for start, end, count in _units(text, max_words):
        if packed and packed[-1][2] + count <= max_words:
            packed[-1][1] = end
            packed[-1][2] += count
        else:
            packed.append([start, end, count])
    spans = []
    for start, end, _ in packed:
        while text[start].isspace():
            start += 1
        while text[end - 1].isspace():
            end -= 1
        spans.append((start, end))
    return spans


def chunk_text(text: str, max_words: int = DEFAULT_MAX_WORDS) -> list[str]:
    """The passage bodies of ``text``."""
    return [text[start:end] for start, end in chunk_spans(text, max_words)]


def chunk_document(doc: Document, max_words: int = DEFAULT_MAX_WORDS) -> list[Passage]:
    """Passages ``f"{doc_id}#{n}"`` (n from 0) of one document, title carried along."""
    return [
        Passage(
            passage_id=f"{doc.doc_id}#{n}",
            doc_id=doc.doc_id,
            index=n,
            title=doc.title,
            text=body,
        )
        for n, body in enumerate(chunk_text(doc.text, max_words))
    ]
