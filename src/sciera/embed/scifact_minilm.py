"""The dense embedder sciera ships and uses by default: all-MiniLM-L6-v2 fine-tuned on
SciFact train by ``sciera train embedder`` (float16 weights, computed in float32). Its
folder holds the model card with the data, splits, hyperparameters, dev metrics and the
command that reproduces it."""

from __future__ import annotations

from pathlib import Path

from sciera.embed.sentence_transformers import SentenceTransformerEmbedder
from sciera.errors import ScieraError

MODEL_DIR = Path(__file__).parent / "models" / "scifact-minilm"


class SciFactMiniLMEmbedder(SentenceTransformerEmbedder):
    """384 dims, unit-length; the weights fingerprint keys cached vectors and indexes."""

    def __init__(self, *, batch_size: int = 64, device: str = "cpu") -> None:
        if not (MODEL_DIR / "config.json").is_file():
            raise ScieraError(
                f"the shipped embedder 'scifact-minilm' is missing from {MODEL_DIR} "
                "(reinstall sciera, or choose --embedder minilm)"
            )
        super().__init__(MODEL_DIR, name="scifact-minilm", batch_size=batch_size, device=device)
