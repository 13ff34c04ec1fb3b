"""The agent's action format: one strict JSON object per turn.

    {"thought": "...", "action": "search", "query": "..."}
    {"thought": "...", "action": "get_document", "doc_id": "..."}
    {"thought": "...", "action": "answer"}

:data:`ACTION_SCHEMA` constrains the LLM call (``LLM.complete_json``);
:func:`read_action` turns its result into an :class:`Action` or a :class:`ParseFailure`
(schema errors, and an action missing the field it needs, e.g. a search without a query).
"""

from __future__ import annotations

import json
import re
from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any, Literal

from sciera.llm.base import JSONResult, ParseFailure
from sciera.llm.parsing import parse_json

ActionKind = Literal["search", "get_document", "answer"]
ACTIONS: tuple[str, ...] = ("search", "get_document", "answer")

# The thought comes last and every field is required, so constrained decoding writes the
# action and its argument first: a reply the token limit cuts inside a long thought still
# names its action (salvaged by read_action). An unused argument is "".
ACTION_SCHEMA: dict[str, Any] = {
    "type": "object",
    "properties": {
        "action": {"type": "string", "enum": list(ACTIONS)},
        "query": {"type": "string", "maxLength": 500},
        "doc_id": {"type": "string", "maxLength": 200},
        "thought": {"type": "string", "maxLength": 2000},
    },
    "required": ["action", "query", "doc_id", "thought"],
}
_FIELDS_BEFORE_THOUGHT = re.compile(
    r'^\s*\{\s*"action"\s*:\s*"(?P<action>[a-z_]+)"\s*,\s*"query"\s*:\s*(?P<query>"(?:[^"\\]|\\.)*")'
    r'\s*,\s*"doc_id"\s*:\s*(?P<doc_id>"(?:[^"\\]|\\.)*")\s*,\s*"thought"\s*:\s*"'
)

_NEEDS = {"search": "query", "get_document": "doc_id"}


@dataclass(frozen=True, slots=True)
class Action:
    """One parsed agent turn; ``query`` / ``doc_id`` are "" unless the action needs them."""

    thought: str
    kind: ActionKind
    query: str = ""
    doc_id: str = ""

    def key(self) -> tuple[str, str]:
        """What makes two actions the same request (no_progress detection)."""
        arg = self.query if self.kind == "search" else self.doc_id
        return self.kind, " ".join(arg.casefold().split())


def action_from_value(value: Mapping[str, Any], raw: str = "") -> Action | ParseFailure:
    """A schema-valid object as an Action; a missing required argument is a failure."""
    kind = str(value.get("action", "")).strip().lower()
    if kind not in ACTIONS:
        return ParseFailure(raw, f"action {kind!r} is not one of {list(ACTIONS)}")
    needed = _NEEDS.get(kind)
    arg = str(value.get(needed, "")).strip() if needed else ""
    if needed and not arg:
        return ParseFailure(raw, f'action "{kind}" needs a non-empty "{needed}"')
    return Action(
        thought=str(value.get("thought", "")).strip(),
        kind=kind,  # type: ignore[arg-type]
        query=arg if kind == "search" else "",
        doc_id=arg if kind == "get_document" else "",
    )


def read_action(result: JSONResult) -> Action | ParseFailure:
    """The action in a ``complete_json`` result, or why there is none. A reply the token
    limit cut inside its thought keeps its action, with the thought up to the cut."""
    if not result.ok or result.value is None:
        salvaged = salvage_cut_action(result.completion.text, result.completion.finish_reason)
        if salvaged is not None:
            return salvaged
        return result.failure or ParseFailure(result.completion.text, "no value")
    return action_from_value(result.value, result.completion.text)


def salvage_cut_action(text: str, finish_reason: str) -> Action | None:
    """The action of a reply cut by the token limit after its action and argument were
    written whole (the thought comes last in :data:`ACTION_SCHEMA`); None otherwise."""
    from sciera.llm.parsing import cut_json_string

    if finish_reason != "length":
        return None
    m = _FIELDS_BEFORE_THOUGHT.match(text)
    if m is None:
        return None
    value = {
        "action": m["action"],
        "query": json.loads(m["query"]),
        "doc_id": json.loads(m["doc_id"]),
        "thought": (cut_json_string(text, "thought") or "") + " [cut]",
    }
    action = action_from_value(value, text)
    return action if isinstance(action, Action) else None


def parse_action(text: str) -> Action | ParseFailure:
    """The action in free reply text (backends without constrained decoding)."""
    parsed = parse_json(text, ACTION_SCHEMA)
    if isinstance(parsed, ParseFailure):
        return parsed
    return action_from_value(parsed, text)
