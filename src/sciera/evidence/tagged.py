"""The shared core of LLM extractors that answer in tags (EviOmni rational and vanilla).

One call renders the prompt with the question and the delimited passages, generates until
``</extract>``, and reads ``<reason>``, ``<sufficient>`` and ``<extract>`` from the reply.
A reply with tags but no ``<extract>`` block is a parse failure: no evidence, never a
guess. A reply without any tag is read as an untagged extract (``trace["untagged"]``).
A reply that stops before its ``<extract>`` (the 1.5B often ends its turn right after
``</reason>``, or reaches the token limit while reasoning) gets one follow-up turn in the
same conversation that asks for the verdict and the extract only (``trace["recovered"]``);
the prompt prefix is unchanged, so a local backend reuses its KV cache.
"""

from __future__ import annotations

import logging
import time
from typing import TYPE_CHECKING, Any

from sciera.evidence.attribute import attribute
from sciera.evidence.base import EvidenceResult
from sciera.llm.base import Message, ParseFailure
from sciera.llm.parsing import extract_tag, parse_choice, strip_reasoning
from sciera.rerank.base import truncate_words
from sciera.text import compression_ratio
from sciera.types import Ranking

if TYPE_CHECKING:
    from sciera.llm.base import LLM
    from sciera.settings import Settings

logger = logging.getLogger(__name__)
STOP = "</extract>"
RECOVER = (
    "Your reply stopped before the <extract> block. Do not reason further. Write "
    "<sufficient>yes</sufficient> or <sufficient>no</sufficient>, then the "
    "<extract></extract> block as instructed."
)


def _sufficient(reply: str) -> bool | None:
    tag = extract_tag(reply, "sufficient")
    if isinstance(tag, ParseFailure):
        return None
    choice = parse_choice(tag, ["yes", "no"])
    return None if isinstance(choice, ParseFailure) else choice == "yes"


def tagged_extract(
    llm: LLM,
    prompt: str,
    question: str,
    ranking: Ranking,
    *,
    name: str,
    judge_sufficiency: bool,
    passage_words: int,
    max_tokens: int,
) -> EvidenceResult:
    from sciera.llm.accounting import stage
    from sciera.llm.prompting import delimit_passages, load_prompt

    items = list(ranking.items)
    contents = [p.passage.contents for p in items]
    if not items:
        return EvidenceResult((), False, 0.0, {"extractor": name, "note": "no passages"})
    template = load_prompt(prompt)
    shown = [truncate_words(c, passage_words) for c in contents]
    messages = template.render(question=question, passages=delimit_passages(shown))
    t0 = time.perf_counter()
    with stage(f"evidence.{name}"):
        reply = llm.complete(messages, max_tokens=max_tokens, stop=[STOP])
    trace: dict[str, Any] = {
        "extractor": name,
        "prompt": f"{prompt}@{template.version}",
        "prompt_tokens": reply.prompt_tokens,
        "completion_tokens": reply.completion_tokens,
        "seconds": time.perf_counter() - t0,
        "finish_reason": reply.finish_reason,
        "raw": reply.text,
    }
    reason = extract_tag(reply.text, "reason")
    trace["reason"] = "" if isinstance(reason, ParseFailure) else reason
    text, recovered = reply.text, False
    if isinstance(extract_tag(text, "extract"), ParseFailure) and (
        "<" in strip_reasoning(text) or reply.finish_reason == "length"
    ):
        follow = [*messages, Message("assistant", text), Message("user", RECOVER)]
        with stage(f"evidence.{name}"):
            more = llm.complete(follow, max_tokens=max_tokens, stop=[STOP])
        text, recovered = more.text, True
        trace.update(
            recovered=True,
            prompt_tokens=reply.prompt_tokens + more.prompt_tokens,
            completion_tokens=reply.completion_tokens + more.completion_tokens,
            seconds=time.perf_counter() - t0,
            finish_reason=more.finish_reason,
            raw=f"{reply.text}\n[follow-up]\n{more.text}",
        )
    sufficient = None
    if judge_sufficiency:  # the follow-up's verdict, else the first reply's
        sufficient = _sufficient(text)
        if sufficient is None and recovered:
            sufficient = _sufficient(reply.text)
    extract = extract_tag(text, "extract")
    if isinstance(extract, ParseFailure) and "<" not in strip_reasoning(text):
        # a tag-free reply is the extract written without its tags (small models do
        # this); attribution below still drops every sentence no passage supports
        extract = strip_reasoning(text)
        trace["untagged"] = True
    if isinstance(extract, ParseFailure):
        logger.warning("%s evidence: %s", name, extract.error)
        trace["parse_error"] = extract.error
        cr = compression_ratio(contents, "")
        return EvidenceResult((), sufficient, cr, trace)
    found = attribute(extract, items)
    trace["extract"] = extract
    trace["unsupported_sentences"] = list(found.unsupported)
    cr = compression_ratio(contents, extract)
    return EvidenceResult(found.evidence, sufficient, cr, trace)


class TaggedExtractor:
    """An LLM extractor driven by one tagged prompt; subclasses name the prompt and
    whether the reply judges sufficiency (``<sufficient>``)."""

    name: str = ""
    prompt: str = ""
    judge_sufficiency: bool = False
    default_max_tokens: int = 256

    def __init__(
        self, llm: LLM, *, passage_words: int = 200, max_tokens: int | None = None
    ) -> None:
        self.llm, self.passage_words = llm, passage_words
        self.max_tokens = max_tokens or self.default_max_tokens

    @classmethod
    def from_settings(cls, settings: Settings, **kwargs: Any) -> TaggedExtractor:
        llm = kwargs.pop("llm", None)
        if llm is None:
            from sciera.llm.registry import make_llm

            llm = make_llm(settings)
        kwargs.setdefault("passage_words", settings.answer.passage_words)
        return cls(llm, **kwargs)

    def extract(self, question: str, ranking: Ranking) -> EvidenceResult:
        return tagged_extract(
            self.llm,
            self.prompt,
            question,
            ranking,
            name=self.name,
            judge_sufficiency=self.judge_sufficiency,
            passage_words=self.passage_words,
            max_tokens=self.max_tokens,
        )
