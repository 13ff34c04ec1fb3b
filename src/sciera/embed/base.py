"""The embedder protocol and the batching helper every backend shares."""

from __future__ import annotations

from collections.abc import Callable, Sequence
from typing import Protocol, runtime_checkable

import numpy as np

ProgressFn = Callable[[int, int], None]
"""Called as ``progress(done, total)`` after each encoded batch."""


@runtime_checkable
class Embedder(Protocol):
    """Turns texts into L2-normalized float32 vectors; queries and passages may differ.

    ``name`` is a short, filesystem-safe identifier of the model (it names the
    index directory ``index/dense-<name>``); ``dim`` is the vector size.
    """

    name: str
    dim: int

    def embed_queries(self, texts: Sequence[str]) -> np.ndarray: ...

    def embed_passages(
        self, texts: Sequence[str], progress: ProgressFn | None = None
    ) -> np.ndarray: ...


def encode_batched(
    encode: Callable[[list[str]], np.ndarray],
    texts: Sequence[str],
    dim: int,
    batch_size: int,
    progress: ProgressFn | None = None,
) -> np.ndarray:
    """Encode ``texts`` in batches with ``encode`` and return normalized float32 rows."""
    if batch_size < 1:
        raise ValueError(f"batch_size must be >= 1, got {batch_size}")
    total = len(texts)
    out = np.empty((total, dim), dtype=np.float32)
    for start in range(0, total, batch_size):
        batch = list(texts[start : start + batch_size])
        vectors = np.asarray(encode(batch), dtype=np.float32).reshape(len(batch), dim)
        out[start : start + len(batch)] = vectors
        if progress is not None:
            progress(start + len(batch), total)
    return l2_normalize(out)


def l2_normalize(vectors: np.ndarray) -> np.ndarray:
    """Rows scaled to unit length (zero rows stay zero)."""
    vectors = np.asarray(vectors, dtype=np.float32)
    norms = np.linalg.norm(vectors, axis=1, keepdims=True)
    return vectors / np.maximum(norms, np.float32(1e-12))
