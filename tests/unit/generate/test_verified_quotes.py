"""A decision-only answer quotes each rationale sentence once, verbatim, in abstract order;
an explanation that opens with another decision than the verdict's is told apart."""

from __future__ import annotations

from sciera.generate.verified import opposes, quoted
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


def test_an_explanation_opening_with_another_decision_opposes_it():
    assert opposes("No, the trial found no effect.", "yes")
    assert opposes("  maybe: the data are thin.", "no")
    assert not opposes("Yes. It lowered the risk.", "yes")
    assert not opposes("No abstract reports the dose.", "maybe")  # "No" as a word, not a verdict
    assert not opposes("The trial found no effect.", "yes")  # only the opening is read
