"""Step 3: question-answer pairs from a passage.

``ours`` (DeepEra Figure 10): 1-3 self-contained pairs from the structured notes plus the
original passage. ``lmqg`` (the "easy" set): answer-aware generation straight from the
passage, no notes. Pairs are then filtered by :func:`screen_pairs` (see :mod:`.validate`).
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

from sciera.datasets.ssli.validate import (
    Rejection,
    check_answer_adds_content,
    check_answer_supported,
    check_duplicate,
    check_self_contained,
    question_key,
)

if TYPE_CHECKING:
    from sciera.datasets.ssli.extract import StructuredNotes
    from sciera.datasets.ssli.specificity import TopicIndex
    from sciera.llm.base import LLM
    from sciera.types import Passage

PROMPTS = {"ours": "ssli_qa", "lmqg": "ssli_qa_lmqg"}
REPAIR_PROMPT = "ssli_qa_repair"
QA_SCHEMA: dict[str, Any] = {
    "type": "object",
    "properties": {
        "pairs": {
            "type": "array",
            "minItems": 1,
            "maxItems": 3,
            "items": {
                "type": "object",
                "properties": {
                    "question": {"type": "string", "maxLength": 400},
                    "answer": {"type": "string", "maxLength": 500},
                    "type": {"type": "string", "maxLength": 40},
                },
                "required": ["question", "answer", "type"],
            },
        }
    },
    "required": ["pairs"],
}


@dataclass(frozen=True, slots=True)
class QAPair:
    question: str
    answer: str
    kind: str = ""  # method | result | significance | factoid


@dataclass(frozen=True, slots=True)
class QAResult:
    pairs: tuple[QAPair, ...]
    error: str = ""


def generate_pairs(
    llm: LLM,
    passage: Passage,
    notes: StructuredNotes | None = None,
    *,
    mode: str = "ours",
    max_tokens: int = 400,
) -> QAResult:
    """Raw pairs from one call (``mode`` "ours" needs ``notes``); nothing filtered yet."""
    from sciera.llm.prompting import delimit, load_prompt

    if mode not in PROMPTS:
        raise ValueError(f"unknown QA mode {mode!r}; choose one of {sorted(PROMPTS)}")
    prompt = load_prompt(PROMPTS[mode])
    if mode == "ours":
        if notes is None:
            raise ValueError("QA mode 'ours' needs structured notes")
        messages = prompt.render(
            notes=delimit(notes.render(), "notes"), passage=delimit(passage.contents)
        )
    else:
        messages = prompt.render(passage=delimit(passage.contents))
    result = llm.complete_json(messages, QA_SCHEMA, max_tokens=max_tokens)
    if not result.ok or result.value is None:
        return QAResult((), result.failure.error if result.failure else "no value")
    pairs = []
    for item in result.value.get("pairs") or []:
        if not isinstance(item, dict):
            continue
        q, a = str(item.get("question", "")).strip(), str(item.get("answer", "")).strip()
        if q and a:
            pairs.append(QAPair(q, a, str(item.get("type", "")).strip().lower()))
    return QAResult(tuple(pairs[:3]), "" if pairs else "no usable pair")


def repair_question(llm: LLM, pair: QAPair, topic: str, *, max_tokens: int = 60) -> QAPair | None:
    """``pair`` with its question written again from the answer and ``topic`` (the source
    title), for questions rejected as self-referencing or underspecified; ``None`` when the
    reply is not a single question. The answer is kept as it is, so answer support still holds."""
    from sciera.llm.prompting import delimit, load_prompt

    messages = load_prompt(REPAIR_PROMPT).render(
        topic=delimit(topic, "topic"), fact=delimit(pair.answer, "fact")
    )
    text = llm.complete(messages, max_tokens=max_tokens).text
    lines = [line.strip().strip('"').strip() for line in text.splitlines()]
    question = next((line for line in lines if line), "")
    if not question.endswith("?") or question.count("?") != 1 or len(question) > 400:
        return None
    return QAPair(question, pair.answer, pair.kind)


def screen_pairs(
    pairs: tuple[QAPair, ...] | list[QAPair],
    passage_text: str,
    seen: set[str],
    *,
    min_support: float = 0.6,
    topics: TopicIndex | None = None,
    max_topic_share: float | None = None,
) -> tuple[list[QAPair], list[tuple[QAPair, Rejection]]]:
    """Apply the question rules in order (self-reference, underspecified when ``topics``
    and ``max_topic_share`` are given, answer restating the question, answer support,
    duplicate); accepted questions are added to ``seen``."""
    from sciera.datasets.ssli.specificity import check_specific

    accepted: list[QAPair] = []
    rejected: list[tuple[QAPair, Rejection]] = []
    for pair in pairs:
        rejection = (
            check_self_contained(pair.question)
            or (
                check_specific(pair.question, topics, max_share=max_topic_share)
                if topics is not None and max_topic_share is not None
                else None
            )
            or check_answer_adds_content(pair.question, pair.answer)
            or check_answer_supported(pair.answer, passage_text, min_share=min_support)
            or check_duplicate(pair.question, seen)
        )
        if rejection is None:
            seen.add(question_key(pair.question))
            accepted.append(pair)
        else:
            rejected.append((pair, rejection))
    return accepted, rejected
