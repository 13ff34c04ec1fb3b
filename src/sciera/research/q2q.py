"""Query-to-question (Q2Q) rewriting (deep-research paper, Section 3.2.5).

An agent issues keyword queries; neural rankers were trained on natural-language
questions. :class:`QueryRewriter` turns the query into a question from the query alone
(mode ``q``) or the query plus the agent's latest thought (``q+r``); ``none`` keeps the
query. A rewrite that loses a number or a quoted phrase of the query is refused
(:func:`missing_spans`) and the raw query is used, with the reason recorded.

:func:`route_queries` decides which text each retrieval stage gets: with ``lexical_raw``
BM25 keeps the raw query while the neural stages get the question (the paper's best
setting). A hybrid first stage takes one text for both of its halves (splitting it would
need a change to the retrievers), so it gets the question and the routing says so.
"""

from __future__ import annotations

import re
import time
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any, Literal

if TYPE_CHECKING:
    from sciera.llm.base import LLM

Q2QMode = Literal["none", "q", "q+r"]
Q2Q_MODES: tuple[str, ...] = ("none", "q", "q+r")
PROMPT = "research_q2q"

QUESTION_SCHEMA: dict[str, Any] = {
    "type": "object",
    "properties": {"question": {"type": "string", "minLength": 3, "maxLength": 500}},
    "required": ["question"],
}

# a number (integer, decimal, with thousands separators), not part of a longer number
_NUMBER = re.compile(r"(?<![\d.,])\d+(?:[.,]\d+)*(?![\d]|[.,]\d)")
# a phrase in straight or curly double quotes
_QUOTED = re.compile(r"\"([^\"]+)\"|\u201c([^\u201d]+)\u201d")


def protected_spans(query: str) -> list[str]:
    """Numbers and quoted phrases of ``query`` (phrases without their quotes), in order."""
    phrases = [" ".join((m.group(1) or m.group(2)).split()) for m in _QUOTED.finditer(query)]
    numbers = _NUMBER.findall(query)
    return list(dict.fromkeys([p for p in phrases if p] + numbers))


def missing_spans(query: str, rewrite: str) -> list[str]:
    """The protected spans of ``query`` absent from ``rewrite``.

    A number must appear as a whole number ("2019" is not in "20190"); a phrase must
    appear word for word, case and spacing aside (its quotes may go).
    """
    flat = " ".join(rewrite.split()).casefold()
    numbers = set(_NUMBER.findall(rewrite))
    missing = []
    for span in protected_spans(query):
        if _NUMBER.fullmatch(span):
            if span not in numbers:
                missing.append(span)
        elif span.casefold() not in flat:
            missing.append(span)
    return missing


@dataclass(frozen=True, slots=True)
class Rewrite:
    """One query's rewrite: ``text`` is what the neural stages get."""

    raw: str
    question: str  # the rewrite the model proposed ("" when none was made or read)
    mode: str
    accepted: bool
    reason: str = ""  # why the raw query is used ("" when the question is)
    prompt_tokens: int = 0
    completion_tokens: int = 0
    seconds: float = 0.0

    @property
    def text(self) -> str:
        return self.question if self.accepted else self.raw


@dataclass(frozen=True, slots=True)
class StageQueries:
    """The text the first stage and the reranker get for one search, and why."""

    first_stage: str
    rerank: str
    note: str = ""


def route_queries(rewrite: Rewrite, first_stage: str, *, lexical_raw: bool) -> StageQueries:
    """BM25 keeps the raw query when ``lexical_raw``; neural stages get ``rewrite.text``."""
    if not rewrite.accepted:
        return StageQueries(rewrite.raw, rewrite.raw)
    if first_stage == "bm25":
        first = rewrite.raw if lexical_raw else rewrite.text
        return StageQueries(first, rewrite.text)
    note = ""
    if first_stage == "hybrid" and lexical_raw:
        note = "hybrid first stage takes one text: its BM25 half got the question too"
    return StageQueries(rewrite.text, rewrite.text, note)


class QueryRewriter:
    """Rewrites agent queries with one schema-constrained LLM call each."""

    def __init__(self, llm: LLM | None, mode: str = "none", *, max_tokens: int = 96) -> None:
        if mode not in Q2Q_MODES:
            raise ValueError(f"unknown q2q mode {mode!r}; choose one of {list(Q2Q_MODES)}")
        if mode != "none" and llm is None:
            raise ValueError(f"q2q mode {mode!r} needs an LLM")
        self.llm, self.mode, self.max_tokens = llm, mode, max_tokens

    def rewrite(self, query: str, thought: str = "") -> Rewrite:
        if self.mode == "none" or self.llm is None:
            return Rewrite(query, "", self.mode, False, "q2q off")
        from sciera.llm.accounting import stage
        from sciera.llm.prompting import delimit, load_prompt

        reasoning = ""
        if self.mode == "q+r" and thought.strip():
            reasoning = "The searcher's latest reasoning:\n" + delimit(thought, "reasoning")
        messages = load_prompt(PROMPT).render(query=delimit(query, "query"), reasoning=reasoning)
        t0 = time.perf_counter()
        with stage("research.q2q"):
            result = self.llm.complete_json(messages, QUESTION_SCHEMA, max_tokens=self.max_tokens)
        c, seconds = result.completion, time.perf_counter() - t0
        cost = (c.prompt_tokens, c.completion_tokens, seconds)
        if not result.ok or result.value is None:
            error = result.failure.error if result.failure else "no value"
            return Rewrite(query, "", self.mode, False, f"unreadable rewrite: {error}", *cost)
        question = " ".join(str(result.value.get("question", "")).split())
        missing = missing_spans(query, question)
        if missing:
            reason = "rewrite dropped " + ", ".join(repr(s) for s in missing)
            return Rewrite(query, question, self.mode, False, reason, *cost)
        return Rewrite(query, question, self.mode, True, "", *cost)
