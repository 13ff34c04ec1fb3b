"""Explicit registry: backend name -> vector index class, plus settings-driven factories."""

from __future__ import annotations

from pathlib import Path

from sciera.errors import ScieraError
from sciera.settings import VectorSettings
from sciera.vectors.base import VectorIndex


def _faiss_class() -> type:
    from sciera.vectors.faiss_index import FaissIndex

    return FaissIndex


def _qdrant_class() -> type:
    from sciera.vectors.qdrant_index import QdrantIndex

    return QdrantIndex


VECTOR_INDEXES = {"faiss": _faiss_class, "qdrant": _qdrant_class}
"""name -> zero-argument function returning the backend class (imports lazily)."""


def _check(backend: str) -> None:
    if backend not in VECTOR_INDEXES:
        raise ScieraError(
            f"unknown vector index {backend!r}; choose one of {sorted(VECTOR_INDEXES)}"
        )


def create_vector_index(
    settings: VectorSettings, dim: int, directory: str | Path, collection: str = "sciera"
) -> VectorIndex:
    """A new, empty index for ``settings.backend`` whose files will live in ``directory``.

    For Qdrant: embedded on-disk collection under ``directory`` unless
    ``settings.qdrant_url`` names a server (then ``collection`` is recreated there).
    """
    _check(settings.backend)
    if settings.backend == "qdrant":
        from sciera.vectors.qdrant_index import LOCAL_DIR, QdrantIndex

        if settings.qdrant_url:
            return QdrantIndex(
                dim,
                url=settings.qdrant_url,
                api_key=settings.qdrant_api_key,
                collection=collection,
                recreate=True,
            )
        return QdrantIndex(
            dim, path=Path(directory) / LOCAL_DIR, collection=collection, recreate=True
        )
    return VECTOR_INDEXES[settings.backend]()(dim)


def load_vector_index(backend: str, directory: str | Path, settings: VectorSettings) -> VectorIndex:
    """Open an index saved by ``backend`` in ``directory``."""
    _check(backend)
    if backend == "qdrant":
        from sciera.vectors.qdrant_index import QdrantIndex

        return QdrantIndex.load(directory, api_key=settings.qdrant_api_key)
    return VECTOR_INDEXES[backend]().load(directory)
