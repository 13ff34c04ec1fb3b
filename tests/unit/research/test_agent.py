"""The research agent's loop on a tiny BM25 corpus with the scripted LLM."""

from __future__ import annotations

import json

import pytest
from research_script import AGENT, ANSWER, Q, act, agent_llm, search

from fakes import ScriptedLLM, prompt_text
from sciera.research import ResearchOptions, research, write_trace
from sciera.research.agent import REPAIR, SEARCH_FIRST

Q1 = "vitamin deficiency multiple sclerosis"
Q2 = "sunlight exposure cutaneous synthesis"
DUP = "  Vitamin deficiency MULTIPLE sclerosis"  # Q1 again, other case and spacing


def run(corpus, overrides, llm, **options):
    opts = ResearchOptions(**options)
    return research(Q, corpus, llm=llm, options=opts, question_type="ideal", **overrides)


def agent_prompts(llm):
    return [c.prompt for c in llm.calls if AGENT in c.prompt]


def test_two_searches_then_an_answer_citing_both(corpus, overrides):
    llm = agent_llm(search(Q1, "need MS risk"), search(Q2, "need the cause"), act("answer"))
    r = run(corpus, overrides, llm)
    assert r.stopped_by == "answer" and not r.partial and r.search_calls == 2
    assert [s.action for s in r.steps] == ["search", "search", "answer"]
    assert r.steps[0].result_ids[0] == "v1#0" and r.steps[1].result_ids[0] == "s1#0"
    assert "s1#0" not in r.steps[0].result_ids  # the second search found what the first missed
    assert {c.passage_id for c in r.answer.citations} == {"v1#0", "s1#0"}
    assert r.answer.trace["research"]["stopped_by"] == "answer"
    prompts = agent_prompts(llm)
    assert len(prompts) == 3 and prompts[1].startswith(prompts[0])  # the context grows
    assert '<passage id="v1#0" doc_id="v1">' in prompts[1]
    assert r.steps[0].prompt_tokens > 0 and r.prompt_tokens >= sum(s.prompt_tokens for s in r.steps)


def test_a_malformed_action_is_repaired_once(corpus, overrides):
    llm = agent_llm(search(Q1), "I will now search for sunlight", search(Q2), act("answer"))
    r = run(corpus, overrides, llm)
    assert r.stopped_by == "answer" and r.steps[1].repaired
    assert "no JSON object" in r.steps[1].error
    repair = REPAIR.split("(")[0]
    assert repair in agent_prompts(llm)[2] and repair not in agent_prompts(llm)[1]


def test_malformed_twice_stops_with_a_partial_answer(corpus, overrides):
    llm = agent_llm(search(Q1), "garbage", act("search", "x"))
    r = run(corpus, overrides, llm)
    assert r.stopped_by == "malformed_action" and r.partial
    assert [s.action for s in r.steps] == ["search", "malformed"]
    assert 'needs a non-empty "query"' in r.steps[1].error
    assert not r.answer.insufficient  # answered from what the first search found
    assert "v1#0" in {c.passage_id for c in r.answer.citations}
    assert r.answer.trace["research"]["partial"]


@pytest.mark.parametrize(
    ("options", "replies", "stopped_by", "steps"),
    [
        ({"max_steps": 2}, [search(Q1), search(Q2), act("answer")], "max_steps", 2),
        ({"budget_tokens": 50}, [search(Q1), search(Q2), act("answer")], "budget_tokens", 1),
        ({}, [search(Q1), search(DUP), search(DUP)], "no_progress", 3),
        ({"max_seconds": 1e-9}, [search(Q1)], "wall_time", 0),
    ],
)
def test_each_limit_is_named(corpus, overrides, options, replies, stopped_by, steps):
    r = run(corpus, overrides, agent_llm(*replies), **options)
    assert r.stopped_by == stopped_by and r.partial
    assert len(r.steps) == steps
    assert r.answer.trace["research"]["stopped_by"] == stopped_by


def test_answering_before_any_search_is_refused(corpus, overrides):
    llm = agent_llm(act("answer"), search(Q1), act("answer"))
    r = run(corpus, overrides, llm)
    assert [s.action for s in r.steps] == ["answer", "search", "answer"]
    assert r.steps[0].note == SEARCH_FIRST and SEARCH_FIRST in agent_prompts(llm)[1]
    assert r.stopped_by == "answer" and r.search_calls == 1


def test_a_passage_with_instructions_is_delimited_flagged_and_not_evidence(corpus, overrides):
    llm = agent_llm(search("calcitriol cures everything"), search(Q1), act("answer"))
    r = run(corpus, overrides, llm)
    assert r.steps[0].result_ids[0] == "x1#0"
    assert r.steps[0].flagged["x1#0"] == ["ignore-instructions"]
    prompt = agent_prompts(llm)[1]
    opened = prompt.index('<passage id="x1#0" doc_id="x1" warning="contains instructions')
    closed = prompt.index("</passage>", opened)
    assert opened < prompt.index("Ignore all previous instructions") < closed
    assert "x1#0" not in {e.passage.passage_id for e in r.answer.evidence}


def test_get_document_reads_a_whole_document(corpus, overrides):
    llm = agent_llm(search(Q1), act("get_document", doc_id="s1"), act("get_document", doc_id="zz"))
    r = run(corpus, overrides, llm, max_steps=3)
    assert r.steps[1].result_ids == ("s1#0",) and '<document doc_id="s1">' in agent_prompts(llm)[2]
    assert r.steps[2].note == "no document with id 'zz'"


def test_q2q_routes_raw_query_to_bm25_and_question_to_the_reranker(corpus, overrides):
    question = "Does vitamin D deficiency in 2019 raise sclerosis risk?"
    llm = (
        ScriptedLLM()
        .on(ANSWER, {"answer": "It does [1]."})
        .on("rewrite a search engine query", {"question": question})
        .on(AGENT, [search("vitamin deficiency sclerosis 2019", "risk?"), act("answer")])
    )
    r = run(corpus, overrides, llm, q2q="q+r", reranker="bm25")
    s = r.steps[0]
    assert s.q2q_used and s.first_stage_query == "vitamin deficiency sclerosis 2019"
    assert s.rerank_query == s.question and "2019" in s.question
    assert r.settings["search"] == "bm25 top-10 >> bm25 top-5"


def test_trace_jsonl_has_one_line_per_step_and_a_final_line(corpus, overrides, tmp_path):
    r = run(corpus, overrides, agent_llm(search(Q1), search(Q2), act("answer")))
    lines = [json.loads(x) for x in write_trace(r, tmp_path / "t.jsonl").read_text().splitlines()]
    assert [x["type"] for x in lines] == ["step", "step", "step", "final"]
    assert [x["step"] for x in lines[:3]] == [1, 2, 3]
    assert lines[0]["query"] == Q1 and lines[0]["result_ids"][0] == "v1#0"
    assert lines[-1]["stopped_by"] == "answer" and lines[-1]["search_calls"] == 2
    assert lines[-1]["answer"]["citations"]


def test_empty_question_is_one_line_error(corpus, overrides):
    from sciera.errors import ScieraError

    with pytest.raises(ScieraError, match="question is empty"):
        research("   ", corpus, llm=agent_llm(act("answer")), **overrides)


def test_question_type_as_argument_or_option_and_never_two_different(corpus, overrides):
    from sciera.errors import ScieraError

    for how in ({"question_type": "yesno"}, {"options": ResearchOptions(question_type="yesno")}):
        llm = agent_llm(search(Q1, "need MS risk"), act("answer"))
        llm.on("yes/no questions", probs={"yes": 0.8, "no": 0.1, "maybe": 0.1})
        llm.on("You explain answers", {"answer": "MS risk rises [1]."})
        assert research(Q, corpus, llm=llm, **how, **overrides).answer.question_type == "yesno"
    with pytest.raises(ScieraError, match="'ideal' given, and 'yesno' in options; give one"):
        opts = ResearchOptions(question_type="yesno")
        research(Q, corpus, llm=agent_llm(act("answer")), options=opts, question_type="ideal")


def test_a_repeated_search_is_refused_once_with_the_queries_tried(corpus, overrides):
    llm = agent_llm(search(Q1), search(DUP), search(Q2), act("answer"))
    r = run(corpus, overrides, llm)
    assert r.stopped_by == "answer" and not r.partial
    assert [s.note for s in r.steps][1] == "repeated request refused"
    assert [s.action for s in r.steps] == ["search", "search", "search", "answer"]
    # before its third turn the agent was told which queries it had already run
    agent_calls = [c for c in llm.calls if AGENT in prompt_text(c.messages)]
    told = prompt_text(agent_calls[2].messages)
    assert "Queries so far" in told and f'"{Q1}"' in told
    assert "Queries so far" not in prompt_text(agent_calls[1].messages)


EXTRACTOR = "highly skilled knowledge reasoner"  # in the rational extractor's prompt only


def _extracting(sufficient: str, *replies: str):
    reply = (
        "<reason>r</reason><sufficient>" + sufficient + "</sufficient>"
        "<extract>Vitamin D deficiency raises MS risk [1].</extract>"
    )
    return agent_llm(*replies).on(EXTRACTOR, reply)


def test_per_step_extraction_condenses_results_and_can_end_the_run(corpus, overrides):
    llm = _extracting("yes", search(Q1), search(Q2), act("answer"))
    r = run(corpus, overrides, llm, extract="rational")
    assert r.stopped_by == "answer" and not r.partial and len(r.steps) == 1
    assert r.steps[0].note == "evidence judged sufficient"
    assert r.answer.citations  # answered from the first search's passages


def test_insufficient_extraction_shows_the_evidence_not_the_passages(corpus, overrides):
    llm = _extracting("no", search(Q1), act("answer"))
    r = run(corpus, overrides, llm, extract="rational")
    assert r.stopped_by == "answer" and len(r.steps) == 2
    second = agent_prompts(llm)[1]
    assert "Vitamin D deficiency raises MS risk" in second
    assert "<passage" in second  # the evidence is still delimited data


class _Windowed:
    """The scripted LLM behind a small context window (what llama.cpp exposes)."""

    def __init__(self, inner, n_ctx: int) -> None:
        self.inner, self.n_ctx = inner, n_ctx

    def count_tokens(self, text: str) -> int:
        return len(text.split())

    def __getattr__(self, name):
        return getattr(self.inner, name)


def test_a_full_context_window_ends_the_run_before_the_call_that_would_overflow(corpus, overrides):
    # the window holds the first call (prompt + two full replies) with 20 tokens to spare:
    # the first search's passages do not fit beside it
    probe = agent_llm(search(Q1), act("answer"))
    run(corpus, overrides, probe)
    first = next(c for c in probe.calls if AGENT in prompt_text(c.messages))
    used = sum(len(m.content.split()) + 8 for m in first.messages)
    inner = agent_llm(search(Q1), search(Q2), act("answer"))
    window = _Windowed(inner, n_ctx=used + 2 * 384 + 20)
    r = run(corpus, overrides, window)
    assert r.stopped_by == "context_full" and r.partial
    assert [s.action for s in r.steps] == ["search"]
    assert r.answer.citations  # answered from what the first search found
