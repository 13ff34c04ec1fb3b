"""Prompt pieces shared by the answer prompts: the evidence blocks and the answer style."""

from __future__ import annotations

from collections.abc import Sequence

from sciera.rerank.base import truncate_words
from sciera.types import Evidence

PROMPTS = {
    "yesno": "answer_yesno",
    "explain": "answer_explain",
    "factoid": "answer_factoid",
    "list": "answer_list",
    "ideal": "answer_ideal",
}

# BioASQ "style 3": answers built from phrases copied from the passages, no paraphrase.
EXTRACTIVE_STYLE = (
    "Prefer answers of only combining direct phrases or sentences from the evidence; "
    "avoid paraphrasing."
)
ABSTRACTIVE_STYLE = "Use your own words, keeping the scientific terms of the evidence."


def style(extractive: bool) -> str:
    return EXTRACTIVE_STYLE if extractive else ABSTRACTIVE_STYLE


def evidence_block_text(e: Evidence) -> str:
    """A summary keeps its passage's title for context; otherwise the passage itself."""
    if e.summary:
        return f"{e.passage.title}\n{e.summary}" if e.passage.title else e.summary
    return e.passage.contents


def render_evidence(evidence: Sequence[Evidence], passage_words: int) -> str:
    """Numbered, delimited evidence blocks ``<passage id="1">`` ... (untrusted text)."""
    from sciera.llm.prompting import delimit_passages

    return delimit_passages(
        [truncate_words(evidence_block_text(e), passage_words) for e in evidence]
    )
