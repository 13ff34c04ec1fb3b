"""The JSON-schema subset validator."""

from __future__ import annotations

import pytest

from sciera.llm.schema import validate

INTENT = {
    "type": "object",
    "properties": {
        "topic": {"type": "string", "minLength": 1},
        "intent": {
            "type": "string",
            "enum": ["definition", "mechanism", "comparison", "causal", "factual"],
        },
        "confidence": {"type": "number", "minimum": 0, "maximum": 1},
        "k": {"type": "integer", "exclusiveMinimum": 0, "exclusiveMaximum": 10},
        "tags": {"type": "array", "items": {"type": "string"}, "maxItems": 2},
        "maybe": {"type": ["string", "null"]},
    },
    "required": ["topic", "intent"],
    "additionalProperties": False,
}


def errors(value: object, schema: dict = INTENT) -> list[str]:
    return [str(e) for e in validate(value, schema)[1]]


def test_valid_object_passes_unchanged() -> None:
    value = {"topic": "p53", "intent": "mechanism", "confidence": 0.5, "k": 3, "tags": ["a"]}
    out, errs = validate(value, INTENT)
    assert errs == []
    assert out == value
    assert out is not value  # a copy, never the caller's object


@pytest.mark.parametrize(
    ("value", "expected"),
    [
        ({"intent": "causal"}, ["$.topic: required key is missing"]),
        ({"topic": "", "intent": "causal"}, ["$.topic: shorter than 1 characters"]),
        ({"topic": "x", "intent": "vibes"}, ["$.intent: 'vibes' is not one of"]),
        (
            {"topic": "x", "intent": "causal", "confidence": 1.01},
            ["$.confidence: 1.01 is above the maximum 1"],
        ),
        (
            {"topic": "x", "intent": "causal", "confidence": -0.1},
            ["$.confidence: -0.1 is below the minimum 0"],
        ),
        ({"topic": "x", "intent": "causal", "k": 0}, ["$.k: 0 must be > 0"]),
        ({"topic": "x", "intent": "causal", "k": 10}, ["$.k: 10 must be < 10"]),
        ({"topic": "x", "intent": "causal", "k": 2.5}, ["$.k: expected integer, got number"]),
        (
            {"topic": "x", "intent": "causal", "confidence": True},
            ["$.confidence: expected number, got boolean"],
        ),
        (
            {"topic": "x", "intent": "causal", "tags": ["a", 3]},
            ["$.tags[1]: expected string, got integer"],
        ),
        (
            {"topic": "x", "intent": "causal", "tags": ["a", "b", "c"]},
            ["$.tags: more than 2 items"],
        ),
        ({"topic": "x", "intent": "causal", "extra": 1}, ["$.extra: unexpected key"]),
        (
            {"topic": "x", "intent": "causal", "maybe": 3},
            ["$.maybe: expected string or null, got integer"],
        ),
        ("not an object", ["$: expected object, got string"]),
    ],
)
def test_violations_are_reported_with_paths(value: object, expected: list[str]) -> None:
    got = errors(value)
    assert len(got) == len(expected)
    for g, e in zip(got, expected, strict=True):
        assert g.startswith(e)


def test_lenient_coercions() -> None:
    value = {"topic": "x", "intent": " Causal", "confidence": "0.25", "k": "4", "maybe": None}
    out, errs = validate(value, INTENT)
    assert errs == []
    assert out == {"topic": "x", "intent": "causal", "confidence": 0.25, "k": 4, "maybe": None}
    assert value["intent"] == " Causal"  # input untouched


def test_no_coercion_of_non_numbers_or_ambiguous_enums() -> None:
    assert errors({"topic": "x", "intent": "causal", "confidence": "high"}) == [
        "$.confidence: expected number, got string"
    ]
    schema = {"enum": ["Yes", "yes"]}
    assert errors("YES", schema) == ["$: 'YES' is not one of ['Yes', 'yes']"]


def test_nan_and_infinity_are_not_numbers() -> None:
    assert errors(float("nan"), {"type": "number"}) == ["$: expected number, got float"]
    assert errors(float("inf"), {"type": "number"}) == ["$: expected number, got float"]


def test_unknown_keywords_are_ignored() -> None:
    assert errors({"a": 1}, {"type": "object", "description": "x", "title": "y"}) == []


def test_grammar_schema_drops_long_string_limits_everywhere_and_keeps_the_rest() -> None:
    from sciera.llm.schema import grammar_schema

    schema = {
        "type": "object",
        "properties": {
            "passage": {"type": "string", "maxLength": 1200, "minLength": 1},
            "items": {"type": "array", "maxItems": 3, "items": {"type": "string", "maxLength": 9}},
            "grade": {"type": "integer", "minimum": 0, "maximum": 10},
            "notes": {"type": "string", "maxLength": 600, "minLength": 700},
        },
        "required": ["passage"],
    }
    out = grammar_schema(schema)
    assert out == {
        "type": "object",
        "properties": {
            "passage": {"type": "string", "minLength": 1},
            "items": {"type": "array", "maxItems": 3, "items": {"type": "string", "maxLength": 9}},
            "grade": {"type": "integer", "minimum": 0, "maximum": 10},
            "notes": {"type": "string", "maxLength": 600},
        },
        "required": ["passage"],
    }
    assert schema["properties"]["passage"]["maxLength"] == 1200  # input untouched
