"""``full``: the passages as they are (CR = 1); it does not judge sufficiency."""

from __future__ import annotations

from typing import Any

from sciera.evidence.base import EvidenceResult, ranking_cr
from sciera.settings import Settings
from sciera.types import Evidence, Ranking


class FullExtractor:
    name = "full"

    @classmethod
    def from_settings(cls, settings: Settings, **kwargs: Any) -> FullExtractor:
        kwargs.pop("llm", None)
        return cls(**kwargs)

    def extract(self, question: str, ranking: Ranking) -> EvidenceResult:
        evidence = tuple(Evidence(it.passage, it.score) for it in ranking)
        passages = [it.passage for it in ranking]
        cr = ranking_cr(passages, evidence) if evidence else 0.0
        return EvidenceResult(evidence, None, cr, {"extractor": self.name})
