"""DeepEra's failure paths through the shared ScriptedLLM (replies parsed by sciera.llm.parsing)."""

from __future__ import annotations

from conftest import QUERY, make_ranking
from fakes import ScriptedLLM
from sciera.filter import ThresholdFilter
from sciera.rerank.deepera.agent import DeepEraReranker
from sciera.rerank.deepera.intent import NEUTRAL_INTENT


def test_unparseable_intent_and_grades_are_never_relevant():
    llm = (
        ScriptedLLM()
        .on("Research question", "I think this is about vitamins.")  # no JSON at all
        .on("Reply in JSON only", ['{"grade": "ten", "reason": 3', "Grade: excellent!"])
    )
    agent = DeepEraReranker(llm, scoring="json", tau=0.0, top_k=None)
    ranked, trace = agent.rerank_with_trace(QUERY, make_ranking())
    assert trace.intent == NEUTRAL_INTENT and trace.intent_fallback and trace.intent_error
    kept, _ = ThresholdFilter(0.0, None).apply(ranked)
    assert len(kept) == 0
    assert all(p.parse_failed and p.score == 0.0 and p.excluded for p in trace.passages)


def test_grade_distribution_from_choice_logprobs():
    llm = (
        ScriptedLLM()
        .on(
            "Research question",
            {"topic": "t", "entity_type": "e", "intent": "causal", "expected_answer_type": "a"},
        )
        .on("Galaxies", probs={"0": 0.9, "1": 0.1})
        .on("Grade:", probs={"8": 0.5, "10": 0.5})
    )
    agent = DeepEraReranker(llm, tau=0.85)
    ranked, trace = agent.rerank_with_trace(QUERY, make_ranking())
    ranked, _ = ThresholdFilter(0.85, 5).apply(ranked)
    scores = {p.passage_id: p.score for p in trace.passages}
    assert scores["d4#0"] == 0.01 and scores["d1#0"] == 0.9  # (0.1 * 1) / 10, (8 + 10) / 2 / 10
    assert trace.intent.intent == "causal"
    assert ranked.passage_ids == ["d1#0", "d2#0", "d3#0", "d5#0"]  # ties keep first-stage order
