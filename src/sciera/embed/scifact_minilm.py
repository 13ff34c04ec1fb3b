"""The dense embedder sciera ships and uses by default: all-MiniLM-L6-v2 fine-tuned on
SciFact train by ``sciera train embedder`` (float16 weights, computed in float32). Its
folder holds the model card with the data, splits, hyperparameters, dev metrics and the
command that reproduces it."""

from __future__ import annotations

from sciera.artifacts.registry import EMBEDDER, open_model
from sciera.embed.sentence_transformers import SentenceTransformerEmbedder

NAME = "scifact-minilm"


class SciFactMiniLMEmbedder(SentenceTransformerEmbedder):
    """384 dims, unit-length; the weights fingerprint keys cached vectors and indexes. Its
    folder is checked against its manifest before it loads (or choose ``--embedder
    minilm``, the base model)."""

    def __init__(self, *, batch_size: int = 64, device: str = "cpu") -> None:
        folder = open_model(EMBEDDER, NAME)
        self.check = folder.check
        super().__init__(folder.path, name=NAME, batch_size=batch_size, device=device)
