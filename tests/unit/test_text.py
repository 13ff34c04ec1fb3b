"""The shared text helpers on hand-computed examples: SQuAD normalization and the
compression ratio with each named tokenizer."""

from __future__ import annotations

import pytest

from sciera.text import compression_ratio, normalize_text


def test_normalize_text_squad_rules():
    # lowercase, punctuation dropped (the apostrophe too), article removed, spaces collapsed
    assert normalize_text("The  Cat's hat!") == "cats hat"
    assert normalize_text("An apple a day.") == "apple day"
    assert normalize_text("theater, another") == "theater another"  # only whole-word articles
    assert normalize_text("well-known (IL-6)") == "wellknown il6"
    assert normalize_text(" The ") == ""


def test_compression_ratio():
    passages = ["one two three", "four five"]  # 5 whitespace tokens
    assert compression_ratio(passages, "one two") == pytest.approx(2.5)
    assert compression_ratio(passages, "") == 5.0  # empty evidence counts as one token
    # "words" splits on non-word characters: "IL-6 levels" -> [IL, 6, levels]
    assert compression_ratio(["IL-6 levels rise"], "IL-6", tokenizer="words") == pytest.approx(2.0)
    assert compression_ratio(["IL-6 levels rise"], "IL-6") == pytest.approx(3.0)
    assert compression_ratio(["abcd"], "ab", tokenizer=list) == pytest.approx(2.0)
    with pytest.raises(ValueError, match="unknown tokenizer"):
        compression_ratio(passages, "x", tokenizer="bpe")
