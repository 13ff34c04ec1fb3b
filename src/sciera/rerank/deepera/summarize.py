"""Step 4, evidence summarization: each kept passage condensed to 1-2 sentences conditioned
on the intent, keeping the original terminology (prompt ``deepera_summarize``). The summary
is attached next to the passage (provenance and :class:`~sciera.types.Evidence`); the
original text is never replaced."""

from __future__ import annotations

from typing import TYPE_CHECKING

from sciera.llm.parsing import strip_reasoning
from sciera.rerank.base import truncate_words
from sciera.rerank.deepera.intent import describe_intent
from sciera.types import Evidence, Intent, Passage, Ranking

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


def evidence_from(ranking: Ranking) -> tuple[Evidence, ...]:
    """Evidence records (passage, score, summary) from a DeepEra ranking."""
    out = []
    for item in ranking.items:
        summary = str(item.provenance.get("deepera", {}).get("summary", "") or "")
        out.append(Evidence(item.passage, item.score, summary))
    return tuple(out)
