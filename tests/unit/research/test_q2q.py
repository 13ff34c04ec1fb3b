"""Query-to-question rewriting: numbers and quoted phrases survive, or the raw query is used."""

from __future__ import annotations

import pytest

from fakes import ScriptedLLM
from sciera.research.q2q import (
    QueryRewriter,
    Rewrite,
    missing_spans,
    protected_spans,
    route_queries,
)

REWRITE = "rewrite a search engine query"


def test_protected_spans_are_numbers_and_quoted_phrases():
    q = 'IL-6 "tumour necrosis factor" 2019 trial 3.5 mg \u201cbody mass\u201d 1,000'
    spans = ["tumour necrosis factor", "body mass", "6", "2019", "3.5", "1,000"]
    assert protected_spans(q) == spans
    assert protected_spans("vitamin d sclerosis") == []


@pytest.mark.parametrize(
    ("query", "rewrite", "missing"),
    [
        ("statin 2019 trial", "What did the 2019 statin trial find?", []),
        ("statin 2019 trial", "What did the recent statin trial find?", ["2019"]),
        ("statin 2019 trial", "What did the statin trial of 20190 find?", ["2019"]),
        ("dose 3.5 mg", "What happens at a dose of 3.5 mg?", []),
        ("dose 3.5 mg", "What happens at a dose of 3 mg?", ["3.5"]),
        ("dose 3.5 mg", "What happens at a dose of 3.50 mg?", ["3.5"]),
        ('"heat shock" yeast', "How does Heat  Shock affect yeast?", []),
        ('"heat shock" yeast', "How does heat stress affect yeast?", ["heat shock"]),
        ('"type 2 diabetes" 40', "Does type 2 diabetes start before 40?", []),
        ('"type 2 diabetes" 40', "Does diabetes start before age 40?", ["type 2 diabetes", "2"]),
    ],
)
def test_missing_spans(query, rewrite, missing):
    assert missing_spans(query, rewrite) == missing


def rewriter(reply, mode="q") -> tuple[QueryRewriter, ScriptedLLM]:
    llm = ScriptedLLM().on(REWRITE, reply)
    return QueryRewriter(llm, mode), llm


def test_a_faithful_rewrite_is_used():
    rw, llm = rewriter({"question": "What did the 2019 statin trial find?"})
    r = rw.rewrite("statin 2019 trial", "I need the trial")
    assert r.accepted and r.text == "What did the 2019 statin trial find?" and r.reason == ""
    assert "I need the trial" not in llm.calls[0].prompt  # mode q: the query alone
    assert r.prompt_tokens > 0


def test_q_plus_r_shows_the_thought_delimited():
    rw, llm = rewriter({"question": "What did the 2019 statin trial find?"}, mode="q+r")
    rw.rewrite("statin 2019 trial", "the cohort size is missing")
    assert "<reasoning>\nthe cohort size is missing\n</reasoning>" in llm.calls[0].prompt
    assert "<query>\nstatin 2019 trial\n</query>" in llm.calls[0].prompt


def test_a_rewrite_that_drops_a_number_falls_back_with_the_reason():
    rw, _ = rewriter({"question": "What did the recent statin trial find?"})
    r = rw.rewrite("statin 2019 trial")
    assert not r.accepted and r.text == "statin 2019 trial"
    assert r.question == "What did the recent statin trial find?"
    assert r.reason == "rewrite dropped '2019'"


def test_an_unreadable_rewrite_falls_back():
    rw, _ = rewriter("sure, here you go")
    r = rw.rewrite("statin trial")
    assert not r.accepted and r.text == "statin trial" and r.reason.startswith("unreadable")


def test_mode_none_makes_no_call():
    llm = ScriptedLLM()
    r = QueryRewriter(llm, "none").rewrite("statin trial")
    assert r.text == "statin trial" and not r.accepted and llm.calls == []
    with pytest.raises(ValueError, match="unknown q2q mode"):
        QueryRewriter(llm, "qr")


def test_routing_keeps_the_raw_query_for_bm25():
    ok = Rewrite("statin trial", "What did the statin trial find?", "q", True)
    bm25 = route_queries(ok, "bm25", lexical_raw=True)
    assert (bm25.first_stage, bm25.rerank) == ("statin trial", "What did the statin trial find?")
    assert route_queries(ok, "bm25", lexical_raw=False).first_stage == ok.question
    assert route_queries(ok, "dense", lexical_raw=True).first_stage == ok.question
    hybrid = route_queries(ok, "hybrid", lexical_raw=True)
    assert hybrid.first_stage == ok.question and "hybrid" in hybrid.note
    refused = Rewrite("statin trial", "x", "q", False, "rewrite dropped '2'")
    assert route_queries(refused, "bm25", lexical_raw=False).rerank == "statin trial"
