"""Passages of a paper document, cut inside the units of its layout.

Each :class:`~sciera.corpus.fulltext.model.Unit` (the paragraphs of one section, or one
caption, or one table) is chunked on its own with the same rule as an abstract
(:func:`~sciera.corpus.chunker.chunk_spans`: sentences packed up to ``max_words``), so a
passage never straddles a section and a caption is a passage of its own. A table's
sentences are its rows. Passages are numbered across the document in reading order and
each passage's body is an exact substring of the document text.
"""

from __future__ import annotations

import re
from bisect import bisect_right
from collections.abc import Sequence

from sciera.corpus.chunker import Sentence, chunk_spans
from sciera.corpus.fulltext.model import Unit
from sciera.corpus.sentences import sentence_spans
from sciera.types import Document, Passage

_LINE = re.compile(r"[^\n]+")


def _unit_sentences(text: str, unit: Unit) -> list[tuple[int, int]]:
    """Sentence spans of one unit, in document coordinates."""
    body = text[unit.start : unit.end]
    if unit.kind == "table":
        local = [(m.start(), m.end()) for m in _LINE.finditer(body) if m.group().strip()]
    else:
        local = sentence_spans(body)
    return [(unit.start + a, unit.start + b) for a, b in local]


def chunk_paper(
    doc: Document, layout: Sequence[Unit], max_words: int
) -> tuple[list[Passage], list[Sentence], list[Unit]]:
    """The passages of a paper document, its sentences (each in its passage) and, for each
    passage, the unit it was cut from (its section, subsection and kind)."""
    passages: list[Passage] = []
    sentences: list[Sentence] = []
    units: list[Unit] = []
    previous_end = 0
    for unit in layout:
        if not previous_end <= unit.start <= unit.end <= len(doc.text):
            raise ValueError(f"layout unit ({unit.start}, {unit.end}) is out of order or of text")
        previous_end = unit.end
        spans = _unit_sentences(doc.text, unit)
        if not spans:
            continue
        local = [(a - unit.start, b - unit.start) for a, b in spans]
        cuts = chunk_spans(doc.text[unit.start : unit.end], max_words, local)
        first = len(passages)
        for start, end in cuts:
            n = len(passages)
            passages.append(
                Passage(
                    passage_id=f"{doc.doc_id}#{n}",
                    doc_id=doc.doc_id,
                    index=n,
                    title=doc.title,
                    text=doc.text[unit.start + start : unit.start + end],
                )
            )
            units.append(unit)
        starts = [unit.start + start for start, _ in cuts]
        for a, b in spans:
            body = doc.text[a:b]
            lead = a + len(body) - len(body.lstrip())
            n = first + max(bisect_right(starts, lead) - 1, 0)
            sentences.append(Sentence(doc.doc_id, len(sentences), passages[n].passage_id, body))
    return passages, sentences, units
