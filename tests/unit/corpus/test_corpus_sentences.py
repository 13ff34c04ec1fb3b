"""Sentence splitting and the abbreviation repair pass."""

from __future__ import annotations

from itertools import pairwise

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from sciera.corpus.sentences import (
    merge_abbreviations,
    sentence_spans,
    split_sentences,
    unglue,
)


@pytest.mark.parametrize(
    ("text", "expected"),
    [
        (
            "Results were reported by Smith et al. and confirmed later. Mice died.",
            ["Results were reported by Smith et al. and confirmed later.", "Mice died."],
        ),
        (
            "Smith et al. (2019) found an effect. Mice died.",
            ["Smith et al. (2019) found an effect.", "Mice died."],
        ),
        (
            "It was shown by Smith et al. The effect was large.",
            ["It was shown by Smith et al.", "The effect was large."],
        ),
        ("See Fig. 2 for details. Mice died.", ["See Fig. 2 for details.", "Mice died."]),
        (
            "Many drugs, e.g. Aspirin, help. Mice died.",
            ["Many drugs, e.g. Aspirin, help.", "Mice died."],
        ),
        (
            "Some drugs, i.e. Aspirin, help. Mice died.",
            ["Some drugs, i.e. Aspirin, help.", "Mice died."],
        ),
        (
            "Drug A vs. Drug B was tested. Mice died.",
            ["Drug A vs. Drug B was tested.", "Mice died."],
        ),
        (
            "It appeared in J. Biol. Chem. in 2001. Mice died.",
            ["It appeared in J. Biol. Chem. in 2001.", "Mice died."],
        ),
        ("Dr. Who was here. Mice died.", ["Dr. Who was here.", "Mice died."]),
        ("It was Dr. Who.", ["It was Dr. Who."]),
        (
            "Work by J. R. Tolkien showed it. Mice died.",
            ["Work by J. R. Tolkien showed it.", "Mice died."],
        ),
        ("Vitamin D. The results were clear.", ["Vitamin D.", "The results were clear."]),
    ],
)
def test_abbreviations_do_not_end_sentences(text: str, expected: list[str]) -> None:
    assert split_sentences(text) == expected


def fragments_to_spans(fragments: list[str]) -> tuple[str, list[tuple[int, int]]]:
    text, spans = "", []
    for fragment in fragments:
        if text:
            text += " "
        spans.append((len(text), len(text) + len(fragment)))
        text += fragment
    return text, spans


@pytest.mark.parametrize(
    ("fragments", "expected"),
    [
        (["Prof.", "Jones did not."], ["Prof. Jones did not."]),
        (["Dr.", "Who was here."], ["Dr. Who was here."]),
        (["See Fig.", "2 for details."], ["See Fig. 2 for details."]),
        (["(Fig.", "3) shows it."], ["(Fig. 3) shows it."]),
        (["Drugs, e.g.", "Aspirin, help."], ["Drugs, e.g. Aspirin, help."]),
        (["That is, i.e.", "Aspirin."], ["That is, i.e. Aspirin."]),
        (["A vs.", "B was tested."], ["A vs. B was tested."]),
        (
            ["Published in J.", "Biol.", "Chem.", "in 2001."],
            ["Published in J. Biol. Chem. in 2001."],
        ),
        (["Smith et al.", "(2019) found it."], ["Smith et al. (2019) found it."]),
        (["Smith et al.", "showed it."], ["Smith et al. showed it."]),
        (["Smith et al.", "The next one."], ["Smith et al.", "The next one."]),
        (["By J.", "Smith."], ["By J. Smith."]),
        (["By A.", "B.", "Smith."], ["By A. B. Smith."]),
        (["Vitamin D.", "The results."], ["Vitamin D.", "The results."]),
        (["Patient no.", "5 died."], ["Patient no. 5 died."]),
        (["He left.", "Then he came back."], ["He left.", "Then he came back."]),
    ],
)
def test_merge_abbreviations(fragments: list[str], expected: list[str]) -> None:
    text, spans = fragments_to_spans(fragments)
    assert [text[a:b] for a, b in merge_abbreviations(text, spans)] == expected


def test_spans_are_exact_substrings_and_unicode_safe() -> None:
    text = "  Été was hot. Über cells (ref. ).Grew fast 🙂 here. Last one.  "
    spans = sentence_spans(text)
    sentences = [text[a:b] for a, b in spans]
    assert sentences == split_sentences(text)
    assert all(s == s.strip() and s for s in sentences)
    assert " ".join(sentences).split() == text.split()
    assert spans == sorted(spans)


def test_blank_lines_are_paragraph_boundaries() -> None:
    text = "First paragraph has no period\n\nSecond paragraph. Its second sentence."
    assert split_sentences(text) == [
        "First paragraph has no period",
        "Second paragraph.",
        "Its second sentence.",
    ]


def test_empty_text_has_no_sentences() -> None:
    assert split_sentences("") == []
    assert split_sentences(" \n\t ") == []


@pytest.mark.parametrize(
    ("text", "expected"),
    [
        # glued sentence ends, as BEIR's SciFact text joins an abstract's sentences
        ("It binds ATP.2,3-DPG does too.", ["It binds ATP.", "2,3-DPG does too."]),
        ("Made from precursors.p62 binds it.", ["Made from precursors.", "p62 binds it."]),
        ("It rose (75%).β-amyloid fell.", ["It rose (75%).", "β-amyloid fell."]),
        ("It is approved.(Funded by NIH.)", ["It is approved.", "(Funded by NIH.)"]),
        ("The first step.(2) The next.", ["The first step.", "(2) The next."]),
        ("Seen at 37°C.The rest failed.", ["Seen at 37°C.", "The rest failed."]),
        ("Found in telomeres.G-quadruplex forms.", ["Found in telomeres.", "G-quadruplex forms."]),
        ('A firm "stroma."At day 4 it fell.', ['A firm "stroma."', "At day 4 it fell."]),
        ("It was low.A total of 5 died.", ["It was low.", "A total of 5 died."]),
        ("A model of MS.It is known.", ["A model of MS.", "It is known."]),
        ("Seen in summer.15 of the 42 died.", ["Seen in summer.", "15 of the 42 died."]),
        # not sentence ends: abbreviations, initials, decimals, notation, addresses
        ("Cells of E.coli grew.", ["Cells of E.coli grew."]),
        ("Given s.c.and i.p.daily.", ["Given s.c.and i.p.daily."]),
        ("It binds H2A.Z variant nucleosomes.", ["It binds H2A.Z variant nucleosomes."]),
        ("Carriers of IL28B.rs12979860 responded.", ["Carriers of IL28B.rs12979860 responded."]),
        ("See ClinicalTrials.gov now.", ["See ClinicalTrials.gov now."]),
        ("At www.lmmd.org/online it is free.", ["At www.lmmd.org/online it is free."]),
        ("It was 3.5 T and p<0.05.", ["It was 3.5 T and p<0.05."]),
        ("As in Fig.2 and ref.3 shown.", ["As in Fig.2 and ref.3 shown."]),
        (
            "In premature aging.1-3 Affected men died.",
            ["In premature aging.1-3 Affected men died."],
        ),
    ],
)
def test_glued_sentences_are_cut_apart(text: str, expected: list[str]) -> None:
    assert [text[a:b] for a, b in unglue(text, sentence_spans(text))] == expected


@settings(max_examples=300, deadline=None)
@given(st.text(alphabet="aZ9 .?!()[]\"'”%/-,:;\nβ°", max_size=80))
def test_unglue_cuts_each_sentence_into_pieces_that_cover_it(text: str) -> None:
    spans = sentence_spans(text)
    pieces = unglue(text, spans)
    # every piece is non-empty and inside one span; the pieces of a span tile it in order
    at = 0
    for start, end in spans:
        mine = [p for p in pieces[at:] if start <= p[0] < end]
        assert mine and mine[0][0] == start and mine[-1][1] == end
        assert all(a < b for a, b in mine)
        assert all(x[1] == y[0] for x, y in pairwise(mine))
        at += len(mine)
    assert at == len(pieces)
