"""First-stage retrieval: BM25, dense, hybrid (RRF / weighted fusion), Max-P documents.

``build_indexes(corpus_dir, settings)`` writes the indexes; ``open_retriever(corpus_dir,
"bm25" | "dense" | "hybrid", settings)`` returns a :class:`Retriever` over them.
"""

from sciera.retrieve.base import MemoryPassages, PassageSource, Retriever
from sciera.retrieve.build import build_indexes
from sciera.retrieve.open import open_retriever

__all__ = ["MemoryPassages", "PassageSource", "Retriever", "build_indexes", "open_retriever"]
