"""Evidence extraction between reranking and generation.

- :mod:`.base`: the ``EvidenceExtractor`` protocol and ``EvidenceResult``.
- :mod:`.registry`: ``make_extractor(name, settings)`` for ``deepera``, ``rational``
  (EviOmni), ``vanilla`` and ``full``.
"""

from sciera.evidence.base import EvidenceExtractor, EvidenceResult
from sciera.evidence.registry import EXTRACTORS, make_extractor

__all__ = ["EXTRACTORS", "EvidenceExtractor", "EvidenceResult", "make_extractor"]
