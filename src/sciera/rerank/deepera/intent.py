"""Step 1, intention recognition (paper Figure 9): one schema-constrained JSON call turns
the question into Intent{topic, entity_type, intent, expected_answer_type}."""

from __future__ import annotations

import time
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

from sciera.types import INTENT_KINDS, Intent

if TYPE_CHECKING:
    from sciera.llm.base import LLM

PROMPT = "deepera_intent"

INTENT_SCHEMA: dict[str, Any] = {
    "type": "object",
    "properties": {
        "topic": {"type": "string", "maxLength": 200},
        "entity_type": {"type": "string", "maxLength": 300},
        "intent": {"type": "string", "enum": list(INTENT_KINDS)},
        "expected_answer_type": {"type": "string", "maxLength": 300},
    },
    "required": ["topic", "entity_type", "intent", "expected_answer_type"],
}

# Used when the intent call fails: no topic/entity claims, the most generic intent.
NEUTRAL_INTENT = Intent(topic="", entity_type="", intent="factual", expected_answer_type="")


@dataclass(frozen=True, slots=True)
class IntentResult:
    intent: Intent
    fallback: bool
    error: str
    prompt_tokens: int
    completion_tokens: int
    seconds: float


def recognize_intent(llm: LLM, question: str, *, max_tokens: int = 200) -> IntentResult:
    """One ``complete_json`` call; on a parse failure or a bad value, the neutral intent."""
    from sciera.llm.prompting import load_prompt

    t0 = time.perf_counter()
    messages = load_prompt(PROMPT).render(query=question)
    result = llm.complete_json(messages, INTENT_SCHEMA, max_tokens=max_tokens)
    c = result.completion
    seconds = time.perf_counter() - t0
    if not result.ok or result.value is None:
        error = result.failure.error if result.failure else "no value"
        tokens = (c.prompt_tokens, c.completion_tokens)
        return IntentResult(NEUTRAL_INTENT, True, error, *tokens, seconds)
    v = result.value
    kind = str(v.get("intent", "")).strip().lower()
    if kind not in INTENT_KINDS:
        return IntentResult(
            NEUTRAL_INTENT,
            True,
            f"intent {kind!r} not one of {list(INTENT_KINDS)}",
            c.prompt_tokens,
            c.completion_tokens,
            seconds,
        )
    intent = Intent(
        topic=str(v.get("topic", "")).strip(),
        entity_type=str(v.get("entity_type", "")).strip(),
        intent=kind,
        expected_answer_type=str(v.get("expected_answer_type", "")).strip(),
    )
    return IntentResult(intent, False, "", c.prompt_tokens, c.completion_tokens, seconds)


def describe_intent(intent: Intent | None) -> str:
    """The structured query as prompt text (the same text for every passage of a question)."""
    if intent is None:
        return "(no structured intent: judge against the question alone)"
    return (
        f"- topic: {intent.topic or 'unknown'}\n"
        f"- entity_type: {intent.entity_type or 'unknown'}\n"
        f"- intent: {intent.intent}\n"
        f"- expected_answer_type: {intent.expected_answer_type or 'unknown'}"
    )
