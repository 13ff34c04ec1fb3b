"""Robust reply parsing: crafted replies with hand-checked expected values."""

from __future__ import annotations

import logging

import pytest

from sciera.llm.base import ParseFailure
from sciera.llm.parsing import (
    clean_reply,
    extract_tag,
    parse_choice,
    parse_json,
    parse_score,
    strip_reasoning,
)

SCHEMA = {
    "type": "object",
    "properties": {
        "score": {"type": "number", "minimum": 0, "maximum": 1},
        "intent": {"type": "string", "enum": ["definition", "mechanism", "causal"]},
    },
    "required": ["score"],
}


@pytest.mark.parametrize(
    ("reply", "expected"),
    [
        ("<think>it is 9</think>answer: 2", "answer: 2"),
        ("<THINK>\nmulti\nline\n</THINK>\nok", "ok"),
        ("ok <think>still thinking, never closed", "ok"),
        ("reasoning whose tag was in the prompt</think>final", "final"),
        ("<think>a</think>x<think>b</think>y", "xy"),
        ("no reasoning", "no reasoning"),
    ],
)
def test_strip_reasoning(reply: str, expected: str) -> None:
    assert strip_reasoning(reply) == expected


def test_clean_reply_unwraps_fences() -> None:
    assert clean_reply('Here:\n```json\n{"a": 1}\n```\nDone') == 'Here:\n{"a": 1}\nDone'
    assert clean_reply("```\n7\n```") == "7"


@pytest.mark.parametrize(
    ("reply", "expected"),
    [
        ('{"score": 0.5}', {"score": 0.5}),
        (
            'Sure! Here is the JSON: {"score": 0.25, "intent": "causal"} Hope it helps.',
            {"score": 0.25, "intent": "causal"},
        ),
        (
            '```json\n{"score": 0.7, "intent": "mechanism",}\n```',
            {"score": 0.7, "intent": "mechanism"},
        ),
        ("{'score': 0.3, 'intent': 'definition'}", {"score": 0.3, "intent": "definition"}),
        (
            '{"score": 0.1, "note": "it\'s fine", "ok": True, "x": None}',
            {"score": 0.1, "note": "it's fine", "ok": True, "x": None},
        ),
        ('{"score": "0.9", "intent": " Mechanism "}', {"score": 0.9, "intent": "mechanism"}),
        ('<think>{"score": 1.0}</think>{"score": 0.2}', {"score": 0.2}),
        ('noise {not json} then {"score": 0.4, "list": [1, 2,]}', {"score": 0.4, "list": [1, 2]}),
        (
            '{"score": 0.6, "text": "braces { inside } strings"}',
            {"score": 0.6, "text": "braces { inside } strings"},
        ),
        ('{"score": 0.5, "t": "line\nbreak"}', {"score": 0.5, "t": "line\nbreak"}),
    ],
)
def test_parse_json_reads_messy_replies(reply: str, expected: dict) -> None:
    assert parse_json(reply, SCHEMA) == expected


@pytest.mark.parametrize(
    ("reply", "error"),
    [
        ("I cannot answer that.", "no JSON object found"),
        ("", "no JSON object found"),
        ('{"score": 0.5', "invalid JSON"),  # truncated
        ('{"score": 1.5}', "above the maximum"),
        ('{"intent": "causal"}', "$.score: required key is missing"),
        ('{"score": 0.5, "intent": "vibes"}', "is not one of"),
        ('{"score": true}', "expected number, got boolean"),
        ('<think>{"score": 0.9}', "no JSON object found"),  # answer only inside reasoning
        ('{"outer": {"score": 0.9}}', "required key is missing"),  # nested object is not the reply
    ],
)
def test_parse_json_failures_are_typed(reply: str, error: str) -> None:
    result = parse_json(reply, SCHEMA)
    assert isinstance(result, ParseFailure)
    assert error in result.error
    assert result.raw == reply


def test_parse_json_without_schema_and_later_valid_object() -> None:
    assert parse_json('{"a": [1, {"b": 2}]}') == {"a": [1, {"b": 2}]}
    # the first object fails the schema, the second one passes
    assert parse_json('Example: {"x": 1}. Answer: {"score": 0.3}', SCHEMA) == {"score": 0.3}
    assert isinstance(parse_json("[1, 2, 3]"), ParseFailure)  # an array is not an object


def test_parse_json_never_raises_on_odd_input() -> None:
    for reply in ["{" * 500, "}{" * 50, "{'a': 'unterminated}", "\x00{\x00}", '{"a": 1e999}']:
        result = parse_json(reply, SCHEMA)
        assert isinstance(result, ParseFailure)


def test_failures_are_logged(caplog: pytest.LogCaptureFixture) -> None:
    with caplog.at_level(logging.WARNING, logger="sciera.llm.parsing"):
        parse_json("nothing here")
    assert "unparseable LLM reply" in caplog.text


@pytest.mark.parametrize(
    ("reply", "lo", "hi", "expected"),
    [
        ("8", 0, 10, 8.0),
        ("8/10", 0, 10, 8.0),
        ("8/10", 0, 1, 0.8),
        ("0.8", 0, 1, 0.8),
        ("8", 0, 1, 0.8),  # a 10-point answer on a 0-1 scale
        ("85", 0, 1, 0.85),  # a 100-point answer on a 0-1 scale
        ("Score: 7.5 out of 10", 0, 10, 7.5),
        ("Score: 7.5 out of 10", 0, 1, 0.75),
        ("80%", 0, 1, 0.8),
        ("80 %", 0, 10, 8.0),
        ("4/5", 1, 5, 4.0),  # denominator equals the top of the scale
        ("3/4", 1, 5, 4.0),  # 1 + 0.75 * 4
        ("Relevance score (0-10): 6", 0, 10, 6.0),
        ("**Score:** 9", 0, 10, 9.0),
        ("I would give it a 7.", 0, 10, 7.0),
        ("On a 1-10 scale, I'd say 7", 0, 10, 7.0),
        ("The passage mentions 12 patients. Rating: 3", 0, 10, 3.0),
        ('{"score": 6, "reason": "partly"}', 0, 10, 6.0),
        ('{"relevance_score": "9/10"}', 0, 1, 0.9),
        ("<think>maybe 9? no...</think>\n2", 0, 10, 2.0),
        ("```\n5\n```", 0, 10, 5.0),
        ("12", 0, 10, 10.0),  # clamped
        ("-3", 0, 10, 0.0),  # clamped
        ("11/10", 0, 1, 1.0),  # clamped
    ],
)
def test_parse_score(reply: str, lo: float, hi: float, expected: float) -> None:
    value = parse_score(reply, lo, hi)
    assert isinstance(value, float)
    assert value == pytest.approx(expected)


@pytest.mark.parametrize(
    "reply",
    [
        "N/A",
        "",
        "The passage is highly relevant!",
        "I rate it 7, but 3 studies disagree.",  # several unlabelled numbers: ambiguous
        "5/0",
        "<think>8</think>",
        "COVID-19",
    ],
)
def test_parse_score_failures(reply: str) -> None:
    assert isinstance(parse_score(reply, 0, 10), ParseFailure)


def test_parse_score_rejects_bad_bounds() -> None:
    with pytest.raises(ValueError):
        parse_score("5", 10, 0)


@pytest.mark.parametrize(
    ("reply", "expected"),
    [
        ("yes", "yes"),
        ("Yes.", "yes"),
        ("  **No**", "no"),
        ("no, because the passage is about mice", "no"),
        ("The answer is yes given the data", "yes"),
        ("<think>yes? no?</think>No", "no"),
    ],
)
def test_parse_choice(reply: str, expected: str) -> None:
    assert parse_choice(reply, ["yes", "no"]) == expected


@pytest.mark.parametrize("reply", ["It could be yes or no", "maybe", "", "yesterday"])
def test_parse_choice_failures(reply: str) -> None:
    assert isinstance(parse_choice(reply, ["yes", "no"]), ParseFailure)


def test_extract_tag() -> None:
    reply = "<think>x</think><reason>because</reason>\n<extract>the evidence</extract>"
    assert extract_tag(reply, "reason") == "because"
    assert extract_tag(reply, "extract") == "the evidence"
    assert extract_tag("<extract>cut off mid", "extract") == "cut off mid"
    assert isinstance(extract_tag("no tags", "extract"), ParseFailure)


def test_cut_json_string_decodes_a_string_cut_by_the_token_limit():
    from sciera.llm.parsing import cut_json_string

    assert cut_json_string('{"answer": "Yes [1]. It \\"also\\" goes\\nhere', "answer") == (
        'Yes [1]. It "also" goes\nhere'
    )
    assert cut_json_string('{"x": "a", "answer": "caf\\u00e9 \\u00', "answer") == "café "
    assert cut_json_string('```json\n{"answer": "fenced and cut', "answer") == "fenced and cut"
    assert cut_json_string('{"answer": "closed"}', "answer") is None
    assert cut_json_string('{"other": "cut', "answer") is None
    assert cut_json_string("no json at all", "answer") is None


def test_salvage_cut_field_keeps_whole_sentences_of_a_cut_reply_only():
    from sciera.llm.parsing import salvage_cut_field

    cut = '{"passage": "First finding holds. Second one [1]. Third is cut mid'
    assert salvage_cut_field(cut, "passage", "length") == "First finding holds. Second one [1]."
    assert salvage_cut_field(cut, "passage", "stop") is None  # unfinished but not cut
    assert salvage_cut_field('{"passage": "no sentence ends here', "passage", "length") is None
    assert salvage_cut_field('{"other": "A. B', "passage", "length") is None
