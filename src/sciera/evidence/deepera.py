"""``deepera``: DeepEra's step 4, each kept passage condensed to 1-2 sentences conditioned
on the question's intent, keeping the original terminology (prompt ``deepera_summarize``).

Reads the filter's kept passages from any reranker. The intent is the one the DeepEra
reranker recognised (``provenance["deepera"]["intent"]`` of the items) when it did;
otherwise (a trained scorer, which needs none, or another reranker) it is recognised here,
once per question and only when there is something to summarise. ``use_intent=False``
(ablation v1) summarises against the question alone. ``sufficient`` is False when no
passage was kept and None otherwise (the filter judges relevance, not sufficiency). CR
counts the kept passages against their summaries. The original passage is always kept
beside its summary.
"""

from __future__ import annotations

import logging
from collections.abc import Mapping
from typing import TYPE_CHECKING, Any

from sciera.evidence.base import EvidenceResult, evidence_text
from sciera.rerank.deepera.agent import STAGE
from sciera.rerank.deepera.summarize import PROMPT, summarize_passage
from sciera.text import compression_ratio
from sciera.types import Evidence, Intent, Ranking, to_plain

if TYPE_CHECKING:
    from sciera.llm.base import LLM
    from sciera.settings import Settings

logger = logging.getLogger(__name__)


class DeepEraExtractor:
    name = "deepera"

    def __init__(self, llm: LLM, *, use_intent: bool = True, max_words: int = 200) -> None:
        self.llm, self.use_intent, self.max_words = llm, use_intent, max_words

    @classmethod
    def from_settings(cls, settings: Settings, **kwargs: Any) -> DeepEraExtractor:
        llm = kwargs.pop("llm", None)
        if llm is None:
            from sciera.llm.registry import make_llm

            llm = make_llm(settings)
        kwargs.setdefault("use_intent", settings.deepera.use_intent)
        kwargs.setdefault("max_words", settings.deepera.max_words)
        return cls(llm, **kwargs)

    def _intent(self, question: str, ranking: Ranking, trace: dict[str, Any]) -> Intent | None:
        if not self.use_intent:
            return None
        for it in ranking:
            given = it.provenance.get(STAGE)
            if isinstance(given, Mapping) and isinstance(given.get("intent"), Mapping):
                return Intent(**given["intent"])
        from sciera.llm.accounting import stage
        from sciera.rerank.deepera.intent import recognize_intent

        with stage("deepera.intent"):
            res = recognize_intent(self.llm, question)
        if res.fallback:
            logger.warning("deepera: intent failed (%s); neutral intent", res.error)
            trace["intent_error"] = res.error
        trace["intent_recognized"] = True
        return res.intent

    def extract(self, question: str, ranking: Ranking) -> EvidenceResult:
        from sciera.llm.accounting import stage
        from sciera.llm.prompting import load_prompt

        trace: dict[str, Any] = {"extractor": self.name}
        evidence: list[Evidence] = []
        if len(ranking):
            intent = self._intent(question, ranking, trace)
            trace["intent"] = to_plain(intent)
            trace["prompt"] = f"{PROMPT}@{load_prompt(PROMPT).version}"
            with stage("deepera.summarize"):
                for it in ranking:
                    text, _ = summarize_passage(
                        self.llm, question, intent, it.passage, max_words=self.max_words
                    )
                    evidence.append(Evidence(it.passage, it.score, text))
        trace["kept"] = [e.passage.passage_id for e in evidence]
        trace["unsummarized"] = [e.passage.passage_id for e in evidence if not e.summary]
        cr = compression_ratio([it.passage.contents for it in ranking], evidence_text(evidence))
        return EvidenceResult(tuple(evidence), False if not evidence else None, cr, trace)
