"""Explicit registry: backend name -> factory taking :class:`EmbedSettings`."""

from __future__ import annotations

from collections.abc import Callable

from sciera.embed.base import Embedder
from sciera.errors import ScieraError
from sciera.settings import EmbedSettings


def _minilm(settings: EmbedSettings) -> Embedder:
    from sciera.embed.minilm import MiniLMEmbedder

    return MiniLMEmbedder(batch_size=settings.batch_size)


def _e5(settings: EmbedSettings) -> Embedder:
    from sciera.embed.e5 import E5Embedder

    return E5Embedder(batch_size=settings.batch_size)


def _sentence_transformers(settings: EmbedSettings) -> Embedder:
    from sciera.embed.sentence_transformers import SentenceTransformerEmbedder

    if not settings.model:
        raise ScieraError(
            "the sentence-transformers embedder needs a model name or path "
            "(--model NAME or SCIERA_EMBED__MODEL)"
        )
    return SentenceTransformerEmbedder(settings.model, batch_size=settings.batch_size)


EMBEDDERS: dict[str, Callable[[EmbedSettings], Embedder]] = {
    "minilm": _minilm,
    "e5": _e5,
    "sentence-transformers": _sentence_transformers,
}


def embedder_name(settings: EmbedSettings) -> str:
    """The ``Embedder.name`` the settings select, without loading the model."""
    if settings.backend == "sentence-transformers":
        from sciera.embed.sentence_transformers import slug

        if not settings.model:
            raise ScieraError("the sentence-transformers embedder needs a model name or path")
        return f"st-{slug(settings.model)}"
    return settings.backend


def create_embedder(settings: EmbedSettings) -> Embedder:
    """Build the embedder named by ``settings.backend``."""
    try:
        factory = EMBEDDERS[settings.backend]
    except KeyError:
        raise ScieraError(
            f"unknown embedder {settings.backend!r}; choose one of {sorted(EMBEDDERS)}"
        ) from None
    return factory(settings)
