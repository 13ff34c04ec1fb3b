"""Step 2, relevance assessment: each passage graded 0..10 against the question and the
structured intent, with the paper's strict criteria (prompt ``deepera_assess``).

The score is E[grade] / 10 from the LLM's grade distribution in one forward pass
(``choice_logprobs``), so it is continuous; no sampling. The prompt is built so that
system + question + intent come first and the passage last: every passage of a question
shares the prefix, and llama.cpp reuses its KV cache. Passages are truncated to a word
budget and sit in a delimited block as untrusted data.

``scoring="json"`` is for backends without logprobs: the LLM writes {"grade", "reason"};
an unparseable reply is a grade of 0 (never relevant).
"""

from __future__ import annotations

import time
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

from sciera.rerank.base import truncate_words
from sciera.rerank.deepera.intent import describe_intent
from sciera.types import Intent, Passage

if TYPE_CHECKING:
    from sciera.llm.base import LLM, Message

PROMPT = "deepera_assess"
PROMPT_YESNO = "deepera_assess_yesno"
PROMPT_REASON = "deepera_assess_reason"
GRADES = tuple(str(i) for i in range(11))

REASON_SCHEMA: dict[str, Any] = {
    "type": "object",
    "properties": {
        "grade": {"type": "integer", "minimum": 0, "maximum": 10},
        "reason": {"type": "string", "maxLength": 300},
    },
    "required": ["grade", "reason"],
}


@dataclass(frozen=True, slots=True)
class Assessment:
    grade_expectation: float  # E[grade] / 10 in [0, 1]
    grade_mass: float
    p_yes: float | None
    reason: str
    parse_failed: bool
    prompt_tokens: int
    completion_tokens: int
    seconds: float


def assess_messages(
    name: str, question: str, intent: Intent | None, passage: Passage, max_words: int
) -> list[Message]:
    from sciera.llm.prompting import delimit, load_prompt

    body = delimit(truncate_words(passage.contents, max_words), "passage")
    return load_prompt(name).render(question=question, intent=describe_intent(intent), passage=body)


def assess_passage(
    llm: LLM,
    question: str,
    intent: Intent | None,
    passage: Passage,
    *,
    max_words: int = 200,
    with_reason: bool = False,
    with_yes: bool = False,
    scoring: str = "logprobs",
) -> Assessment:
    t0 = time.perf_counter()
    ptok = ctok = 0
    reason = ""
    failed = False
    p_yes: float | None = None
    if scoring == "json":
        graded = _json_grade(llm, question, intent, passage, max_words)
        grade, mass, reason, failed, ptok, ctok = graded
    elif scoring == "logprobs":
        probs = llm.choice_logprobs(
            assess_messages(PROMPT, question, intent, passage, max_words), list(GRADES)
        )
        grade, mass, ptok = probs.expected() / 10.0, probs.raw_mass, probs.prompt_tokens
        if with_reason:
            _, _, reason, _, p2, c2 = _json_grade(llm, question, intent, passage, max_words)
            ptok, ctok = ptok + p2, ctok + c2
    else:
        raise ValueError(f"scoring must be 'logprobs' or 'json', not {scoring!r}")
    if with_yes:
        yes = llm.choice_logprobs(
            assess_messages(PROMPT_YESNO, question, intent, passage, max_words), ["yes", "no"]
        )
        p_yes, ptok = float(yes.probs.get("yes", 0.0)), ptok + yes.prompt_tokens
    return Assessment(
        grade_expectation=min(max(grade, 0.0), 1.0),
        grade_mass=mass,
        p_yes=p_yes,
        reason=reason,
        parse_failed=failed,
        prompt_tokens=ptok,
        completion_tokens=ctok,
        seconds=time.perf_counter() - t0,
    )


def _json_grade(
    llm: LLM, question: str, intent: Intent | None, passage: Passage, max_words: int
) -> tuple[float, float, str, bool, int, int]:
    """(grade/10, mass, reason, failed, prompt_tokens, completion_tokens); failure -> 0."""
    messages = assess_messages(PROMPT_REASON, question, intent, passage, max_words)
    result = llm.complete_json(messages, REASON_SCHEMA, max_tokens=120)
    c = result.completion
    if not result.ok or result.value is None:
        error = result.failure.error if result.failure else "no value"
        return 0.0, 0.0, f"unparseable reply ({error})", True, c.prompt_tokens, c.completion_tokens
    try:
        grade = float(result.value["grade"])
    except (KeyError, TypeError, ValueError):
        return 0.0, 0.0, "reply without a numeric grade", True, c.prompt_tokens, c.completion_tokens
    grade = min(max(grade, 0.0), 10.0) / 10.0
    reason = str(result.value.get("reason", "")).strip()
    return grade, 1.0, reason, False, c.prompt_tokens, c.completion_tokens
