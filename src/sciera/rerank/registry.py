"""Explicit registry: reranker name -> class (imported lazily, so heavy backends cost nothing
until asked for). Each class builds itself from settings with ``from_settings``."""

from __future__ import annotations

import importlib
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from sciera.rerank.base import Reranker
    from sciera.settings import Settings

RERANKERS: dict[str, str] = {
    "embedding": "sciera.rerank.embedding:EmbeddingReranker",
    "cross_encoder": "sciera.rerank.cross_encoder:CrossEncoderReranker",
    "llm_pointwise": "sciera.rerank.llm_pointwise:LLMPointwiseReranker",
    "llm_graded": "sciera.rerank.llm_pointwise:LLMGradedReranker",
    "llm_listwise": "sciera.rerank.llm_listwise:LLMListwiseReranker",
    "ensemble": "sciera.rerank.ensemble:EnsembleReranker",
    "deepera": "sciera.rerank.deepera.agent:DeepEraReranker",
}


def reranker_class(name: str) -> type:
    try:
        target = RERANKERS[name]
    except KeyError:
        raise ValueError(f"unknown reranker {name!r}; choose one of {sorted(RERANKERS)}") from None
    module, _, attr = target.partition(":")
    return getattr(importlib.import_module(module), attr)


def make_reranker(name: str, settings: Settings | None = None, **kwargs: Any) -> Reranker:
    """Build the named reranker. Keyword arguments override what settings provide
    (e.g. ``llm=...``, ``embedder=...``, ``model=...`` for the cross-encoder)."""
    if settings is None:
        from sciera.settings import load_settings

        settings = load_settings()
    return reranker_class(name).from_settings(settings, **kwargs)
