"""A small validator for the JSON-schema subset sciera's prompts use.

Supported keywords: ``type`` (a name or a list of names: object, array, string,
number, integer, boolean, null), ``properties``, ``required``,
``additionalProperties`` (false only), ``enum``, ``minimum``, ``maximum``,
``exclusiveMinimum``, ``exclusiveMaximum``, ``minLength``, ``maxLength``,
``items``, ``minItems``, ``maxItems``. Other keywords (``description``,
``title`` ...) are ignored.

Two lenient coercions make small models usable without weakening the contract:
a string holding a plain number is read as that number where the schema asks
for a number, and a string matching an enum member case-insensitively (and
ignoring surrounding whitespace) is replaced by that member. Everything else
must match exactly. The input is never mutated; a coerced copy is returned.
"""

from __future__ import annotations

import math
import re
from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any

_NUMBER = re.compile(r"^\s*[-+]?(\d+(\.\d*)?|\.\d+)([eE][-+]?\d+)?\s*$")


@dataclass(frozen=True, slots=True)
class SchemaError:
    """One violation: a JSON path like ``$.items[2].score`` and what is wrong."""

    path: str
    problem: str

    def __str__(self) -> str:
        return f"{self.path}: {self.problem}"


def _is_type(value: Any, name: str) -> bool:
    if name == "object":
        return isinstance(value, Mapping)
    if name == "array":
        return isinstance(value, list | tuple)
    if name == "string":
        return isinstance(value, str)
    if name == "boolean":
        return isinstance(value, bool)
    if name == "null":
        return value is None
    if isinstance(value, bool) or not isinstance(value, int | float):
        return False
    if not math.isfinite(value):
        return False
    return name == "number" or (name == "integer" and float(value).is_integer())


def _coerce(value: Any, types: list[str], schema: Mapping[str, Any]) -> Any:
    """Apply the two documented coercions; return ``value`` unchanged otherwise."""
    if not isinstance(value, str):
        return value
    if types and not any(_is_type(value, t) for t in types) and _NUMBER.match(value):
        number = float(value)
        if "integer" in types and number.is_integer():
            return int(number)
        if "number" in types:
            return number
    enum = schema.get("enum")
    if enum is not None and value not in enum:
        key = value.strip().casefold()
        hits = [m for m in enum if isinstance(m, str) and m.casefold() == key]
        if len(hits) == 1:
            return hits[0]
    return value


def validate(
    value: Any, schema: Mapping[str, Any], path: str = "$"
) -> tuple[Any, list[SchemaError]]:
    """Check ``value`` against ``schema``; return (coerced copy, violations)."""
    errors: list[SchemaError] = []
    out = _validate(value, schema, path, errors)
    return out, errors


def _validate(value: Any, schema: Mapping[str, Any], path: str, errors: list[SchemaError]) -> Any:
    declared = schema.get("type")
    types = [declared] if isinstance(declared, str) else list(declared or [])
    value = _coerce(value, types, schema)
    if types and not any(_is_type(value, t) for t in types):
        errors.append(SchemaError(path, f"expected {' or '.join(types)}, got {_kind(value)}"))
        return value
    if "enum" in schema and value not in schema["enum"]:
        errors.append(SchemaError(path, f"{value!r} is not one of {list(schema['enum'])}"))
    if _is_type(value, "number"):
        _check_range(value, schema, path, errors)
    if isinstance(value, str):
        if len(value) < schema.get("minLength", 0):
            errors.append(SchemaError(path, f"shorter than {schema['minLength']} characters"))
        if "maxLength" in schema and len(value) > schema["maxLength"]:
            errors.append(SchemaError(path, f"longer than {schema['maxLength']} characters"))
    if isinstance(value, Mapping):
        return _validate_object(value, schema, path, errors)
    if isinstance(value, list | tuple):
        return _validate_array(list(value), schema, path, errors)
    return value


def _check_range(value: float, schema: Mapping[str, Any], path: str, errors: list) -> None:
    if "minimum" in schema and value < schema["minimum"]:
        errors.append(SchemaError(path, f"{value} is below the minimum {schema['minimum']}"))
    if "maximum" in schema and value > schema["maximum"]:
        errors.append(SchemaError(path, f"{value} is above the maximum {schema['maximum']}"))
    if "exclusiveMinimum" in schema and value <= schema["exclusiveMinimum"]:
        errors.append(SchemaError(path, f"{value} must be > {schema['exclusiveMinimum']}"))
    if "exclusiveMaximum" in schema and value >= schema["exclusiveMaximum"]:
        errors.append(SchemaError(path, f"{value} must be < {schema['exclusiveMaximum']}"))


def _validate_object(
    value: Mapping[str, Any], schema: Mapping[str, Any], path: str, errors: list[SchemaError]
) -> dict[str, Any]:
    props: Mapping[str, Any] = schema.get("properties", {})
    out: dict[str, Any] = {}
    for key in schema.get("required", []):
        if key not in value:
            errors.append(SchemaError(f"{path}.{key}", "required key is missing"))
    for key, item in value.items():
        if key in props:
            out[key] = _validate(item, props[key], f"{path}.{key}", errors)
        elif schema.get("additionalProperties", True) is False:
            errors.append(SchemaError(f"{path}.{key}", "unexpected key"))
        else:
            out[key] = item
    return out


def _validate_array(
    value: list[Any], schema: Mapping[str, Any], path: str, errors: list[SchemaError]
) -> list[Any]:
    if len(value) < schema.get("minItems", 0):
        errors.append(SchemaError(path, f"fewer than {schema['minItems']} items"))
    if "maxItems" in schema and len(value) > schema["maxItems"]:
        errors.append(SchemaError(path, f"more than {schema['maxItems']} items"))
    items = schema.get("items")
    if not isinstance(items, Mapping):
        return value
    return [_validate(v, items, f"{path}[{i}]", errors) for i, v in enumerate(value)]


def _kind(value: Any) -> str:
    for name in ("null", "boolean", "integer", "number", "string", "array", "object"):
        if _is_type(value, name):
            return name
    return type(value).__name__


# llama.cpp's grammar converter unrolls a string length limit into one nested rule per
# character; past its repetition limit the grammar fails to parse and the process crashes
# (maxLength 1200 did, 600 did not). Limits up to this stay in the grammar, where they
# bound generation; longer ones are left out and checked after parsing.
GRAMMAR_MAX_LENGTH = 600


def grammar_schema(schema: Any) -> Any:
    """``schema`` without string length limits above :data:`GRAMMAR_MAX_LENGTH`, for
    grammar-constrained decoding. The reply is validated against the full schema
    afterwards, and ``max_tokens`` bounds its length anyway."""
    if isinstance(schema, Mapping):
        return {
            k: grammar_schema(v)
            for k, v in schema.items()
            if not (k in ("minLength", "maxLength") and _too_long(v))
        }
    if isinstance(schema, list):
        return [grammar_schema(v) for v in schema]
    return schema


def _too_long(limit: Any) -> bool:
    return not isinstance(limit, int) or limit > GRAMMAR_MAX_LENGTH
