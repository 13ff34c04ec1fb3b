"""``rational``: EviOmni rational evidence extraction (paper Table 14).

One call reasons (``<reason>``), judges whether the passages suffice (``<sufficient>``)
and writes the evidence (``<extract>``); generation stops at ``</extract>``.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

from sciera.evidence.base import EvidenceResult
from sciera.evidence.tagged import tagged_extract
from sciera.types import Ranking

if TYPE_CHECKING:
    from sciera.llm.base import LLM
    from sciera.settings import Settings

PROMPT = "evidence_rational"


class RationalExtractor:
    name = "rational"

    def __init__(self, llm: LLM, *, passage_words: int = 200, max_tokens: int = 512) -> None:
        self.llm, self.passage_words, self.max_tokens = llm, passage_words, max_tokens

    @classmethod
    def from_settings(cls, settings: Settings, **kwargs: Any) -> RationalExtractor:
        llm = kwargs.pop("llm", None)
        if llm is None:
            from sciera.llm.registry import make_llm

            llm = make_llm(settings)
        kwargs.setdefault("passage_words", settings.answer.passage_words)
        return cls(llm, **kwargs)

    def extract(self, question: str, ranking: Ranking) -> EvidenceResult:
        return tagged_extract(
            self.llm,
            PROMPT,
            question,
            ranking,
            name=self.name,
            judge_sufficiency=True,
            passage_words=self.passage_words,
            max_tokens=self.max_tokens,
        )
