"""The vector index protocol and input checks shared by the backends."""

from __future__ import annotations

from collections.abc import Sequence
from pathlib import Path
from typing import Protocol, Self, runtime_checkable

import numpy as np

Hits = list[list[tuple[str, float]]]
"""Per query, ``(id, score)`` pairs best first."""


@runtime_checkable
class VectorIndex(Protocol):
    """Exact or approximate maximum-inner-product search over string-keyed vectors.

    Vectors are expected L2-normalized, so inner product equals cosine similarity.
    """

    dim: int

    def add(self, ids: Sequence[str], vectors: np.ndarray) -> None: ...

    def search(self, queries: np.ndarray, k: int) -> Hits: ...

    def save(self, directory: str | Path) -> None: ...

    @classmethod
    def load(cls, directory: str | Path) -> Self: ...

    def __len__(self) -> int: ...


def as_matrix(vectors: np.ndarray, dim: int, what: str = "vectors") -> np.ndarray:
    """``vectors`` as a C-contiguous float32 (n, dim) matrix, or a ValueError."""
    arr = np.asarray(vectors, dtype=np.float32)
    if arr.ndim == 1:
        arr = arr.reshape(1, -1)
    if arr.ndim != 2 or arr.shape[1] != dim:
        raise ValueError(f"{what} must have shape (n, {dim}), got {np.shape(vectors)}")
    return np.ascontiguousarray(arr)


def check_new_ids(ids: Sequence[str], n_vectors: int, known: set[str]) -> None:
    """Raise if ids and vectors disagree in number, or an id repeats."""
    if len(ids) != n_vectors:
        raise ValueError(f"{len(ids)} ids for {n_vectors} vectors")
    fresh = set(ids)
    if len(fresh) != len(ids):
        raise ValueError("duplicate ids in one add() call")
    clash = fresh & known
    if clash:
        raise ValueError(f"ids already in the index: {sorted(clash)[:5]}")
