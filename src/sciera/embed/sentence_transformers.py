"""Any sentence-transformers model, by hub name (needs internet once) or local path.

A local folder of the plain shape (a transformer, mean pooling, normalization: the shipped
embedder and all-MiniLM-L6-v2 are) is run with ``transformers`` alone
(:mod:`sciera.embed.plain`, the same vectors without sentence-transformers' 3 s import);
anything else through sentence-transformers."""

from __future__ import annotations

import logging
import re
from collections.abc import Sequence
from pathlib import Path

import numpy as np

from sciera.artifacts.manifest import weights_id
from sciera.embed.base import ProgressFn, encode_batched
from sciera.embed.plain import load_encoder, max_tokens, mean_pooled, mean_pooled_config
from sciera.errors import require

logger = logging.getLogger(__name__)


def slug(model: str) -> str:
    """A filesystem-safe short name for a model name or path."""
    base = Path(model).name if Path(model).exists() else model
    return re.sub(r"[^A-Za-z0-9._-]+", "-", base).strip("-").lower() or "model"


class SentenceTransformerEmbedder:
    """A sentence-transformers model: a plain local folder through :mod:`sciera.embed.plain`,
    anything else through ``sentence_transformers.SentenceTransformer``.

    ``query_prefix`` / ``passage_prefix`` are prepended to the texts (e.g.
    ``"query: "`` / ``"passage: "`` for E5 models). With ``HF_HUB_OFFLINE=1``
    only locally cached models or paths load.
    """

    def __init__(
        self,
        model: str | Path,
        *,
        name: str | None = None,
        batch_size: int = 64,
        query_prefix: str = "",
        passage_prefix: str = "",
        device: str = "cpu",
    ) -> None:
        self.model_ref = str(model)
        self.name = name or f"st-{slug(self.model_ref)}"
        self.batch_size = batch_size
        self.query_prefix = query_prefix
        self.passage_prefix = passage_prefix
        logger.info("loading sentence-transformers model %s", self.model_ref)
        plain = mean_pooled_config(self.model_ref)
        if plain is not None:
            require("transformers", "dense")
            self._model, self._tokenizer = load_encoder(self.model_ref, device=device)
            self._max_length = max_tokens(self._model, self._tokenizer, plain.max_length)
            self.dim = int(self._model.config.hidden_size)
        else:
            st = require("sentence_transformers", "dense")
            import torch

            # weights may ship as float16; CPU math runs in float32 (float16 matmuls are slow)
            self._model = st.SentenceTransformer(
                self.model_ref, device=device, model_kwargs={"dtype": torch.float32}
            )
            self._tokenizer = None
            self.dim = int(self._model.get_embedding_dimension())
        self.weights = weights_id(self.model_ref)  # local folders: what cached vectors key on

    def _encode(self, texts: list[str]) -> np.ndarray:
        if self._tokenizer is not None:
            model, tokenizer = self._model, self._tokenizer
            return mean_pooled(model, tokenizer, texts, self._max_length, self.batch_size)
        return self._model.encode(
            texts,
            batch_size=self.batch_size,
            show_progress_bar=False,
            convert_to_numpy=True,
            normalize_embeddings=True,
        )

    def embed_queries(self, texts: Sequence[str]) -> np.ndarray:
        prefixed = [self.query_prefix + t for t in texts]
        return encode_batched(self._encode, prefixed, self.dim, self.batch_size)

    def embed_passages(
        self, texts: Sequence[str], progress: ProgressFn | None = None
    ) -> np.ndarray:
        prefixed = [self.passage_prefix + t for t in texts]
        return encode_batched(self._encode, prefixed, self.dim, self.batch_size, progress)
