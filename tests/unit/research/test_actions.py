"""The agent's JSON action format."""

from __future__ import annotations

import json

from sciera.llm.base import Completion, JSONResult, ParseFailure
from sciera.research.actions import Action, parse_action, read_action


def _reply(action: str, query: str = "", doc_id: str = "", thought: str = "t") -> str:
    return json.dumps({"action": action, "query": query, "doc_id": doc_id, "thought": thought})


def test_the_three_actions_parse():
    assert parse_action(_reply("search", " x y ", thought="a")) == Action(
        "a", "search", query="x y"
    )
    doc = parse_action("```json\n" + _reply("get_document", doc_id="d1", thought="b") + "\n```")
    assert doc == Action("b", "get_document", doc_id="d1")
    assert parse_action(_reply("ANSWER", thought="c")) == Action("c", "answer")


def test_bad_actions_are_failures_with_a_reason():
    cases = {
        "I think I should search": "no JSON object",
        _reply("browse", "x"): "not one of",
        _reply("search"): 'needs a non-empty "query"',
        _reply("get_document", doc_id="  "): '"doc_id"',
        '{"action": "answer", "query": "", "doc_id": ""}': "thought",
        '{"thought": "a", "action": "search", "query": "x"}': "doc_id",  # every field, always
    }
    for text, reason in cases.items():
        failure = parse_action(text)
        assert isinstance(failure, ParseFailure), text
        assert reason in failure.error, (text, failure.error)


def test_a_reply_cut_inside_its_thought_keeps_its_action():
    cut = '{"action": "search", "query": "vitamin D \\"MS\\"", "doc_id": "", "thought": "The first'
    result = JSONResult(None, Completion(cut, finish_reason="length"), ParseFailure(cut, "cut"))
    action = read_action(result)
    assert action == Action("The first [cut]", "search", query='vitamin D "MS"')
    # cut before the argument was complete, or not by the limit: no action
    early = '{"action": "search", "query": "vitamin'
    assert isinstance(
        read_action(JSONResult(None, Completion(early, finish_reason="length"))), ParseFailure
    )
    assert isinstance(
        read_action(JSONResult(None, Completion(cut, finish_reason="stop"))), ParseFailure
    )


def test_same_request_ignores_case_and_spacing():
    a = Action("x", "search", query="Vitamin  D")
    assert a.key() == Action("y", "search", query="vitamin d").key()
    assert a.key() != Action("x", "get_document", doc_id="vitamin d").key()
