"""Text embedders: one protocol (:class:`Embedder`), one module per backend.

Build one from settings with :func:`sciera.embed.registry.create_embedder`.
"""

from sciera.embed.base import Embedder, ProgressFn
from sciera.embed.registry import EMBEDDERS, create_embedder

__all__ = ["EMBEDDERS", "Embedder", "ProgressFn", "create_embedder"]
