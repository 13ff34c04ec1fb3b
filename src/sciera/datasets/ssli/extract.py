"""Step 2: structured notes (method, result, significance) per passage, one JSON call."""

from __future__ import annotations

from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from sciera.llm.base import LLM
    from sciera.types import Passage

PROMPT = "ssli_extract"
FIELDS = ("method", "result", "significance")
NOTES_SCHEMA: dict[str, Any] = {
    "type": "object",
    "properties": {f: {"type": "string", "maxLength": 600} for f in FIELDS},
    "required": list(FIELDS),
}


@dataclass(frozen=True, slots=True)
class StructuredNotes:
    method: str
    result: str
    significance: str

    def render(self) -> str:
        """The notes as prompt text for QA generation."""
        return (
            f"- Method: {self.method}\n- Result: {self.result}\n- Significance: {self.significance}"
        )


@dataclass(frozen=True, slots=True)
class ExtractResult:
    notes: StructuredNotes | None  # None when the reply could not be used
    error: str = ""


def extract_notes(llm: LLM, passage: Passage, *, max_tokens: int = 320) -> ExtractResult:
    """Notes for ``passage``; a parse failure or all-empty notes gives ``notes=None``."""
    from sciera.llm.prompting import delimit, load_prompt

    messages = load_prompt(PROMPT).render(passage=delimit(passage.contents))
    result = llm.complete_json(messages, NOTES_SCHEMA, max_tokens=max_tokens)
    if not result.ok or result.value is None:
        return ExtractResult(None, result.failure.error if result.failure else "no value")
    values = {f: str(result.value.get(f, "")).strip() for f in FIELDS}
    if not any(values.values()):
        return ExtractResult(None, "all fields empty")
    return ExtractResult(StructuredNotes(**values))
