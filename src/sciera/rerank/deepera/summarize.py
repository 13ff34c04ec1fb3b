"""Step 4, evidence summarization: each kept passage condensed to 1-2 sentences conditioned
on the intent, keeping the original terminology (prompt ``deepera_summarize``). The summary
is attached next to the passage (:class:`~sciera.types.Evidence`, by the ``deepera``
evidence extractor); the original text is never replaced."""

from __future__ import annotations

from typing import TYPE_CHECKING

from sciera.llm.parsing import strip_reasoning
from sciera.rerank.base import truncate_words
from sciera.rerank.deepera.intent import describe_intent
from sciera.types import Intent, Passage

if TYPE_CHECKING:
    from sciera.llm.base import LLM, Completion

PROMPT = "deepera_summarize"


def summarize_passage(
    llm: LLM,
    question: str,
    intent: Intent | None,
    passage: Passage,
    *,
    max_words: int = 200,
    max_tokens: int = 96,
) -> tuple[str, Completion]:
    from sciera.llm.prompting import delimit, load_prompt

    body = delimit(truncate_words(passage.contents, max_words), "passage")
    messages = load_prompt(PROMPT).render(
        question=question, intent=describe_intent(intent), passage=body
    )
    reply = llm.complete(messages, max_tokens=max_tokens)
    text = " ".join(strip_reasoning(reply.text).split()).strip().strip('"')
    return text, reply
