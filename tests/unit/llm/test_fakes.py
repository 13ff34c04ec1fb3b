"""The ScriptedLLM stand-in behaves as documented (other stages' unit tests rely on it)."""

from __future__ import annotations

import re

import pytest

from fakes import ScriptedLLM
from sciera.errors import ScieraError
from sciera.llm.base import LLM, Message

SCHEMA = {"type": "object", "properties": {"n": {"type": "integer"}}, "required": ["n"]}


def user(text: str) -> list[Message]:
    return [Message("system", "sys"), Message("user", text)]


def test_rules_match_by_substring_regex_and_predicate_in_order() -> None:
    llm = (
        ScriptedLLM()
        .on("apple", "fruit")
        .on(re.compile(r"\bcar\b"), "vehicle")
        .on(lambda p: p.endswith("?"), "question")
        .on("apple pie", "never reached")
    )
    assert isinstance(llm, LLM)
    assert llm.complete(user("an apple pie")).text == "fruit"
    assert llm.complete(user("a red car")).text == "vehicle"
    assert llm.complete(user("why?")).text == "question"
    with pytest.raises(LookupError, match="no rule for complete"):
        llm.complete(user("nothing matches"))
    assert llm.calls_to("complete")[0].prompt == "sys\nan apple pie"


def test_reply_sequences_stop_and_max_tokens() -> None:
    llm = ScriptedLLM(default="d").on("x", ["one two three", "second"])
    assert llm.complete(user("x"), max_tokens=2).text == "one two"
    assert llm.complete(user("x")).text == "second"
    assert llm.complete(user("x")).text == "second"  # the last reply repeats
    first = ScriptedLLM().on("x", "alpha. beta").complete(user("x"), stop=["."])
    assert (first.text, first.finish_reason, first.prompt_tokens) == ("alpha", "stop", 2)
    assert llm.complete(user("other")).text == "d"


def test_json_replies_go_through_the_real_parser() -> None:
    llm = ScriptedLLM().on("good", {"n": 3}).on("bad", "{'n': 'three'}")
    assert llm.complete_json(user("good"), SCHEMA).value == {"n": 3}
    bad = llm.complete_json(user("bad"), SCHEMA)
    assert not bad.ok and bad.failure is not None


def test_choice_distributions_and_one_hot_fallback() -> None:
    llm = ScriptedLLM().on("dist", probs={"yes": 0.3, "no": 0.1, "other": 0.6}).on("text", "No.")
    probs = llm.choice_logprobs(user("dist"), ["yes", "no"])
    assert probs.probs == pytest.approx({"yes": 0.75, "no": 0.25})
    assert probs.raw_mass == pytest.approx(0.4)
    hot = llm.choice_logprobs(user("text"), ["yes", "no"])
    assert hot.probs == {"yes": 0.0, "no": 1.0} and hot.raw_mass == 0.0


def test_raises_rule() -> None:
    llm = ScriptedLLM().on("boom", raises=ScieraError("down"))
    with pytest.raises(ScieraError, match="down"):
        llm.complete(user("boom"))
    assert len(llm.calls) == 1
