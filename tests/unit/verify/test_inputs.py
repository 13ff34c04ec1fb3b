"""The text pairs the trained verifier reads."""

from __future__ import annotations

import pytest

from sciera.verify.inputs import sentence_pair, verdict_pair

SENTS = ["First.", "Second finding.", "Third."]


def test_sentence_pair_puts_the_sentence_first_then_its_context():
    assert sentence_pair("c", SENTS, 1, "T", context="none") == ("c", "Second finding.")
    assert sentence_pair("c", SENTS, 1, "T", context="title", sep="</s>") == (
        "c",
        "Second finding. </s> T",
    )
    assert sentence_pair("c", SENTS, 0, "T", context="neighbours")[1] == (
        "First. [SEP] T [SEP] Second finding."
    )
    assert sentence_pair("c", SENTS, 1, "", context="title")[1] == "Second finding."
    with pytest.raises(ValueError):
        sentence_pair("c", SENTS, 0, context="abstract")


def test_verdict_pair_joins_rationales_then_title():
    assert verdict_pair("c", ["A.", " B. "], "T") == ("c", "A. B. [SEP] T")
    assert verdict_pair("q?", ["A."], "") == ("q?", "A.")
