"""``deepera``: DeepEra's kept passages with their query-conditioned summaries.

Reads a ranking the DeepEra reranker produced (``stage == "deepera"``); given any other
ranking it runs its own :class:`~sciera.rerank.deepera.agent.DeepEraReranker` first (for
fixed candidate pools such as PubMedQA contexts). ``sufficient`` is False when nothing
survived the filter and None otherwise (the filter judges relevance, not sufficiency).
CR counts the passages DeepEra read against the summaries it kept.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

from sciera.errors import ScieraError
from sciera.evidence.base import EvidenceResult, evidence_text
from sciera.rerank.deepera.agent import STAGE
from sciera.rerank.deepera.summarize import evidence_from
from sciera.text import compression_ratio
from sciera.types import Ranking

if TYPE_CHECKING:
    from sciera.rerank.deepera.agent import DeepEraReranker
    from sciera.settings import Settings


class DeepEraExtractor:
    name = "deepera"

    def __init__(self, reranker: DeepEraReranker | None = None) -> None:
        self.reranker = reranker

    @classmethod
    def from_settings(cls, settings: Settings, **kwargs: Any) -> DeepEraExtractor:
        reranker = kwargs.pop("reranker", None)
        if reranker is None and kwargs:
            from sciera.rerank.registry import make_reranker

            reranker = make_reranker("deepera", settings, **kwargs)
        return cls(reranker)

    def extract(self, question: str, ranking: Ranking) -> EvidenceResult:
        trace: dict[str, Any] = {"extractor": self.name}
        read = list(ranking)
        if ranking.stage != STAGE:
            if self.reranker is None:
                raise ScieraError(
                    "deepera evidence needs a ranking from the deepera reranker "
                    f"(got stage {ranking.stage!r}) or an extractor built with a reranker"
                )
            ranking, deepera = self.reranker.rerank_with_trace(question, ranking)
            trace["deepera"] = deepera.to_dict()
        evidence = evidence_from(ranking)
        trace["kept"] = [e.passage.passage_id for e in evidence]
        trace["unsummarized"] = [e.passage.passage_id for e in evidence if not e.summary]
        cr = compression_ratio([it.passage.contents for it in read], evidence_text(evidence))
        return EvidenceResult(evidence, False if not evidence else None, cr, trace)
