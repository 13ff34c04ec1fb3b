"""Explicit registry: backend name -> factory taking :class:`EmbedSettings`."""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path

from sciera.artifacts.registry import trained_dir
from sciera.embed.base import Embedder
from sciera.errors import ScieraError
from sciera.settings import EmbedSettings


def resolve_model(model: str, home: str | Path | None) -> str:
    """A bare name of a model trained by ``sciera train embedder`` (a folder under
    ``home/models``) becomes its path; anything else is returned as given."""
    path = trained_dir(model, home)
    return str(path) if path is not None else model


def with_home(settings: EmbedSettings, home: str | Path | None) -> EmbedSettings:
    """``settings`` with a trained model's bare name resolved under ``home/models``."""
    if settings.backend != "sentence-transformers" or not settings.model:
        return settings
    resolved = resolve_model(settings.model, home)
    return (
        settings if resolved == settings.model else settings.model_copy(update={"model": resolved})
    )


def _minilm(settings: EmbedSettings) -> Embedder:
    from sciera.embed.minilm import MiniLMEmbedder

    return MiniLMEmbedder(batch_size=settings.batch_size)


def _scifact_minilm(settings: EmbedSettings) -> Embedder:
    from sciera.embed.scifact_minilm import SciFactMiniLMEmbedder

    return SciFactMiniLMEmbedder(batch_size=settings.batch_size)


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
    "scifact-minilm": _scifact_minilm,
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


def create_embedder(settings: EmbedSettings, home: str | Path | None = None) -> Embedder:
    """Build the embedder named by ``settings.backend`` (trained models' bare names are
    looked up under ``home/models``)."""
    settings = with_home(settings, home)
    try:
        factory = EMBEDDERS[settings.backend]
    except KeyError:
        raise ScieraError(
            f"unknown embedder {settings.backend!r}; choose one of {sorted(EMBEDDERS)}"
        ) from None
    return factory(settings)
