"""Sentence-preserving chunking into passages of at most max_words words."""

from __future__ import annotations

import pytest

from sciera.corpus import (
    Sentence,
    chunk_document,
    chunk_text,
    chunk_with_sentences,
    split_sentences,
)
from sciera.types import Document


def sentence(i: int, words: int) -> str:
    """A sentence of exactly ``words`` words, e.g. 'S3 w w end.'"""
    return " ".join([f"S{i}", *["w"] * (words - 2), "end."])


def text_of(*lengths: int) -> str:
    return " ".join(sentence(i, n) for i, n in enumerate(lengths))


def test_sentences_are_packed_greedily() -> None:
    text = text_of(4, 4, 4)
    assert len(split_sentences(text)) == 3
    assert chunk_text(text, max_words=8) == [
        "S0 w w end. S1 w w end.",
        "S2 w w end.",
    ]
    assert chunk_text(text, max_words=12) == [text]
    assert chunk_text(text, max_words=4) == split_sentences(text)


def test_only_a_sentence_over_the_limit_is_split_on_words() -> None:
    text = text_of(3, 10, 2)
    # S0 (3 words) | S1 cut into 4 + 4 + 2 words | the 2-word rest shares with S2 (2 words)
    assert chunk_text(text, max_words=4) == [
        "S0 w end.",
        "S1 w w w",
        "w w w w",
        "w end. S2 end.",
    ]


def test_limits_and_sentence_integrity_on_varied_text() -> None:
    lengths = (7, 1, 12, 3, 30, 5, 5, 2, 9, 40, 4)
    text = text_of(*lengths)
    sentences = split_sentences(text)
    assert len(sentences) == len(lengths)
    for limit in (3, 5, 8, 13, 40, 250):
        passages = chunk_text(text, limit)
        assert all(1 <= len(p.split()) <= limit for p in passages)
        assert " ".join(passages).split() == text.split()  # nothing lost, nothing repeated
        for s in sentences:
            if len(s.split()) <= limit:
                assert any(s in p for p in passages), (limit, s)


def test_document_passages_ids_titles_and_determinism() -> None:
    doc = Document("PMC7", "A long title " * 50, text_of(6, 6, 6))
    passages = chunk_document(doc, max_words=12)
    assert [(p.passage_id, p.doc_id, p.index) for p in passages] == [
        ("PMC7#0", "PMC7", 0),
        ("PMC7#1", "PMC7", 1),
    ]
    assert all(p.title == doc.title for p in passages)
    # The title is not counted: 12 body words fit although the title has 150 words.
    assert len(passages[0].text.split()) == 12
    assert passages[0].contents.startswith(doc.title + "\n")
    assert all(p.text in doc.text for p in passages)
    assert chunk_document(doc, max_words=12) == passages


def test_whitespace_is_trimmed_and_empty_text_gives_no_passage() -> None:
    assert chunk_text("   Mice died.  \n ", 5) == ["Mice died."]
    assert chunk_text("  \n ", 5) == []


def test_max_words_must_be_positive() -> None:
    with pytest.raises(ValueError, match="max_words"):
        chunk_text("Mice died.", 0)


def test_sentences_are_placed_in_their_passages() -> None:
    doc = Document("d", "T", text_of(4, 4, 4))
    passages, sentences = chunk_with_sentences(doc, max_words=8)
    assert passages == chunk_document(doc, max_words=8)
    assert sentences == [
        Sentence("d", 0, "d#0", "S0 w w end."),
        Sentence("d", 1, "d#0", "S1 w w end."),
        Sentence("d", 2, "d#1", "S2 w w end."),
    ]


def test_given_sentence_boundaries_cut_the_passages() -> None:
    # the splitter keeps "Dr. Smith" together; a format may say otherwise
    doc = Document("d", "", "Dr. Smith w w end. He left now.")
    assert [s.text for s in chunk_with_sentences(doc)[1]] == [
        "Dr. Smith w w end.",
        "He left now.",
    ]
    passages, sentences = chunk_with_sentences(doc, 3, [(0, 3), (4, 18), (19, 31)])
    assert [p.text for p in passages] == ["Dr.", "Smith w w", "end.", "He left now."]
    # a sentence over the limit is in the passage holding its first word
    assert [(s.text, s.passage_id) for s in sentences] == [
        ("Dr.", "d#0"),
        ("Smith w w end.", "d#1"),
        ("He left now.", "d#3"),
    ]


def test_given_sentences_keep_their_spaces_and_may_be_empty() -> None:
    text = "First one.   \n Second. " + " " + "Third."
    spans = [(0, 14), (15, 22), (23, 23), (24, 30)]
    passages, sentences = chunk_with_sentences(Document("d", "", text), 250, spans)
    assert [s.text for s in sentences] == ["First one.   \n", "Second.", "", "Third."]
    assert {s.passage_id for s in sentences} == {"d#0"}
    assert [p.text for p in passages] == [text.strip()]


def test_bad_sentence_spans_are_refused() -> None:
    doc = Document("d", "", "One. Two.")
    with pytest.raises(ValueError, match="sentence 1: span"):
        chunk_with_sentences(doc, 250, [(5, 9), (0, 4)])
    with pytest.raises(ValueError, match="sentence 0: span"):
        chunk_with_sentences(doc, 250, [(0, 40)])


def test_stored_sentences_are_unglued_where_passages_are_not():
    from sciera.corpus.chunker import chunk_with_sentences
    from sciera.types import Document

    text = (
        "Alterations in the U.S. brain result in disabilities.A line scan (MRI) was used, "
        "e.g. in 3.5 T scanners.It worked. Then p<0.05.We saw it in CRC.A trial followed."
    )
    passages, sentences = chunk_with_sentences(Document("x", "T", text))
    assert [p.text for p in passages] == [text]  # passages cut as the splitter cuts them
    assert [s.text for s in sentences] == [
        "Alterations in the U.S. brain result in disabilities.",
        "A line scan (MRI) was used, e.g. in 3.5 T scanners.",
        "It worked.",
        "Then p<0.05.",
        "We saw it in CRC.",
        "A trial followed.",
    ]
