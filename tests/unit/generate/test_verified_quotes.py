"""A decision-only answer quotes each rationale sentence once, verbatim, in abstract order."""

from __future__ import annotations

from sciera.generate.verified import quoted
from sciera.types import Evidence, Passage, Rationale


def _evidence(*texts: str) -> Evidence:
    passage = Passage("d1#0", "d1", 0, "T", " ".join(texts))
    rationales = tuple(Rationale("d1", i, t, 1.0 - i / 10) for i, t in enumerate(texts))
    return Evidence(passage, 1.0, rationales=rationales)


def test_a_sentence_two_overlapping_snippets_share_is_quoted_once():
    e = _evidence("Without ATP, loops emerge.", "Cohesin needs ATP.", "Without  ATP, loops emerge.")
    assert quoted(e) == '"Without ATP, loops emerge." "Cohesin needs ATP."'


def test_distinct_sentences_are_all_quoted_and_long_ones_cut():
    e = _evidence("One two three four.", "Five six.")
    assert quoted(e, words=3) == '"One two three ..." "Five six."'
    assert quoted(e, limit=1) == '"One two three four."'
