"""Sentence-preserving chunking of documents into passages of at most ``max_words`` words.

Words are maximal runs of non-space characters (what ``str.split()`` returns).
Sentences are packed greedily, in order, into a passage while its body stays
within ``max_words``; only a sentence longer than the limit is cut, on word
boundaries, into pieces of ``max_words`` words (the last piece may be shared
with the following sentences). The limit counts the passage *body* only: the
title is not counted (``Passage.contents`` prepends it when indexing or showing
a passage). Each passage body is an exact substring of the document text, and
the output depends only on the text and ``max_words``.

Sentences are the splitter's (:func:`~sciera.corpus.sentences.sentence_spans`) unless a
format gives them (``sentences=``: character spans into the text, as SciFact's
sentence-split corpus does). :func:`chunk_with_sentences` also returns each sentence as a
:class:`Sentence`, numbered in document order, in the passage that holds its first
non-space character: since passages are cut on sentence boundaries, a sentence lies in
one passage (only a sentence longer than ``max_words`` runs on into the next ones).
"""

from __future__ import annotations

import re
from bisect import bisect_right
from collections.abc import Iterator, Sequence
from dataclasses import dataclass
from itertools import pairwise

from sciera.corpus.sentences import sentence_spans, unglue
from sciera.types import Document, Passage

DEFAULT_MAX_WORDS = 250
_WORD = re.compile(r"\S+")
_SPACE = re.compile(r"\s")


Spans = Sequence[tuple[int, int]]


@dataclass(frozen=True, slots=True)
class Sentence:
    """One sentence of a document: ``index`` in the document's sentence list, the passage
    it falls in, and its text verbatim (a substring of the document text)."""

    doc_id: str
    index: int
    passage_id: str
    text: str


def _segments(text: str, sentences: Spans) -> list[tuple[int, int]]:
    """Sentences as consecutive character ranges that together cover ``text``.

    Each cut sits on whitespace (or a text edge), so every word lies in exactly one
    segment: a word belongs to the sentence in which it starts, and a sentence
    boundary that falls inside a word (``"(ref. ).Here"``) never splits it.
    """
    cuts = [0]
    for start, _ in sentences[1:]:
        if start <= 0 or start >= len(text):
            continue
        cut = start
        if not text[cut - 1].isspace():
            space = _SPACE.search(text, cut)
            cut = space.start() if space else len(text)
        if cut > cuts[-1]:
            cuts.append(cut)
    cuts.append(len(text))
    return [(a, b) for a, b in pairwise(cuts) if a < b]


def _units(text: str, max_words: int, sentences: Spans) -> Iterator[tuple[int, int, int]]:
    """``(start, end, words)`` of each sentence, sentences over the limit cut in pieces."""
    for a, b in _segments(text, sentences):
        count = len(text[a:b].split())
        if count <= max_words:
            if count:
                yield a, b, count
            continue
        words = [m.span() for m in _WORD.finditer(text, a, b)]
        for i in range(0, count, max_words):
            piece = words[i : i + max_words]
            yield piece[0][0], piece[-1][1], len(piece)


def chunk_spans(
    text: str, max_words: int = DEFAULT_MAX_WORDS, sentences: Spans | None = None
) -> list[tuple[int, int]]:
    """Character spans of the passages of ``text`` (no leading or trailing spaces), cut on
    the boundaries of ``sentences`` (spans into ``text``; default: the splitter's)."""
    if max_words < 1:
        raise ValueError(f"max_words must be at least 1, got {max_words}")
    if sentences is None:
        sentences = sentence_spans(text)
    packed: list[list[int]] = []  # [start, end, words]
    for start, end, count in _units(text, max_words, sentences):
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
    return chunk_with_sentences(doc, max_words)[0]


def check_sentence_spans(text: str, sentences: Spans) -> None:
    """Raise ValueError unless ``sentences`` are in order, within ``text`` and disjoint."""
    previous = 0
    for i, (start, end) in enumerate(sentences):
        if not previous <= start <= end <= len(text):
            raise ValueError(f"sentence {i}: span ({start}, {end}) is out of order or of the text")
        previous = end


def chunk_with_sentences(
    doc: Document, max_words: int = DEFAULT_MAX_WORDS, sentences: Spans | None = None
) -> tuple[list[Passage], list[Sentence]]:
    """The passages of ``doc`` (as :func:`chunk_document`) and its sentences, each placed in
    its passage; ``sentences`` are the format's spans into ``doc.text`` (default: the
    splitter's). A document with no passage (empty text) has no sentence."""
    spans = list(sentence_spans(doc.text) if sentences is None else sentences)
    check_sentence_spans(doc.text, spans)
    cuts = chunk_spans(doc.text, max_words, spans)
    if sentences is None:  # the stored sentences only: passages are cut as before
        spans = unglue(doc.text, spans)
    passages = [
        Passage(
            passage_id=f"{doc.doc_id}#{n}",
            doc_id=doc.doc_id,
            index=n,
            title=doc.title,
            text=doc.text[start:end],
        )
        for n, (start, end) in enumerate(cuts)
    ]
    if not passages:
        return passages, []
    starts = [start for start, _ in cuts]
    out = []
    for i, (start, end) in enumerate(spans):
        body = doc.text[start:end]
        first = start + (len(body) - len(body.lstrip()))
        n = max(bisect_right(starts, first) - 1, 0)
        out.append(Sentence(doc.doc_id, i, passages[n].passage_id, body))
    return passages, out


def passage_sentences(passages: Sequence[Passage]) -> list[Sentence]:
    """Sentences for passages cut by someone else: each passage's text split on its own,
    numbered across the document in passage order."""
    out: list[Sentence] = []
    for p in passages:
        for start, end in sentence_spans(p.text):
            out.append(Sentence(p.doc_id, len(out), p.passage_id, p.text[start:end]))
    return out
