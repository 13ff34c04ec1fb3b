"""Explicit registry: reranker name -> class (imported lazily, so heavy backends cost nothing
until asked for). Each class builds itself from settings with ``from_settings``."""

from __future__ import annotations

import importlib
from collections.abc import Mapping
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from sciera.rerank.base import Reranker
    from sciera.settings import Settings

RERANKERS: dict[str, str] = {
    "bm25": "sciera.rerank.bm25:BM25Reranker",
    "embedding": "sciera.rerank.embedding:EmbeddingReranker",
    "cross_encoder": "sciera.rerank.cross_encoder:CrossEncoderReranker",
    "llm_pointwise": "sciera.rerank.llm_pointwise:LLMPointwiseReranker",
    "llm_graded": "sciera.rerank.llm_pointwise:LLMGradedReranker",
    "llm_listwise": "sciera.rerank.llm_listwise:LLMListwiseReranker",
    "ensemble": "sciera.rerank.ensemble:EnsembleReranker",
    "deepera": "sciera.rerank.deepera.agent:DeepEraReranker",
}

LLM_RERANKERS: frozenset[str] = frozenset(
    {"llm_pointwise", "llm_graded", "llm_listwise", "deepera"}
)
"""Rerankers that always call an LLM (built with ``llm=``); an ensemble does when a member does."""


def uses_llm(name: str, params: Mapping[str, Any] | None = None) -> bool:
    """Whether reranker ``name`` built with ``params`` calls an LLM. An ensemble of named
    members calls one when a member does; the ``bioasq`` preset (no members) always does."""
    if name in LLM_RERANKERS:
        return True
    if name != "ensemble":
        return False
    members = (params or {}).get("members")
    if members is None or not all(isinstance(m, Mapping) for m in members):
        return True  # the bioasq preset, or members built already: assume it does
    from sciera.rerank.ensemble import parse_members

    return any(uses_llm(m.name, m.params) for m in parse_members(members))


def reranker_class(name: str) -> type:
    try:
        target = RERANKERS[name]
    except KeyError:
        raise ValueError(f"unknown reranker {name!r}; choose one of {sorted(RERANKERS)}") from None
    module, _, attr = target.partition(":")
    return getattr(importlib.import_module(module), attr)


def reranker_identity(
    name: str, settings: Settings, params: Mapping[str, Any] | None = None
) -> str:
    """What reranker ``name`` built with ``params`` loads beyond those parameters (a trained
    model read by name: its files hashed), or "" when it loads nothing of the kind. A class
    says so with an ``identity(settings, **params)`` classmethod."""
    identity = getattr(reranker_class(name), "identity", None)
    return identity(settings, **dict(params or {})) if identity is not None else ""


def make_reranker(name: str, settings: Settings | None = None, **kwargs: Any) -> Reranker:
    """Build the named reranker. Keyword arguments override what settings provide
    (e.g. ``llm=...``, ``embedder=...``, ``model=...`` for the cross-encoder)."""
    if settings is None:
        from sciera.settings import load_settings

        settings = load_settings()
    return reranker_class(name).from_settings(settings, **kwargs)
