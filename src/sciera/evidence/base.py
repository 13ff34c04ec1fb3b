"""The EvidenceExtractor protocol: a reranked Ranking in, concise evidence out.

Every extractor returns an :class:`EvidenceResult`: the evidence records (each keeps its
original passage, so citations always resolve to a passage id), whether the extractor
judged the evidence sufficient (None when it does not judge), the EviOmni compression
ratio CR = tokens of the input passages / tokens of the evidence, and a JSON-ready trace.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from dataclasses import dataclass, field
from types import MappingProxyType
from typing import Any, Protocol, runtime_checkable

from sciera.text import compression_ratio
from sciera.types import Evidence, Passage, Ranking


@dataclass(frozen=True, slots=True)
class EvidenceResult:
    evidence: tuple[Evidence, ...]
    sufficient: bool | None
    compression_ratio: float
    trace: Mapping[str, Any] = field(default_factory=dict)

    def __post_init__(self) -> None:
        object.__setattr__(self, "evidence", tuple(self.evidence))
        object.__setattr__(self, "trace", MappingProxyType(dict(self.trace)))

    @property
    def text(self) -> str:
        """All evidence text, one record per line (what CR counts)."""
        return evidence_text(self.evidence)


@runtime_checkable
class EvidenceExtractor(Protocol):
    """Turns the passages of a ranking into the evidence the generator reads."""

    name: str

    def extract(self, question: str, ranking: Ranking) -> EvidenceResult: ...


def evidence_text(evidence: Iterable[Evidence]) -> str:
    return "\n".join(e.text for e in evidence)


def ranking_cr(passages: Iterable[Passage], evidence: Iterable[Evidence]) -> float:
    """CR of ``evidence`` against the passages it was extracted from (whitespace tokens)."""
    return compression_ratio([p.contents for p in passages], evidence_text(evidence))
