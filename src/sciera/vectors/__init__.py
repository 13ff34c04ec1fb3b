"""Vector indexes: one protocol (:class:`VectorIndex`), one module per backend."""

from sciera.vectors.base import VectorIndex
from sciera.vectors.registry import VECTOR_INDEXES, create_vector_index, load_vector_index

__all__ = ["VECTOR_INDEXES", "VectorIndex", "create_vector_index", "load_vector_index"]
