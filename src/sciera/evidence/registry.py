"""Explicit registry: evidence extractor name -> class (imported lazily)."""

from __future__ import annotations

import importlib
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from sciera.evidence.base import EvidenceExtractor
    from sciera.settings import Settings

EXTRACTORS: dict[str, str] = {
    "deepera": "sciera.evidence.deepera:DeepEraExtractor",
    "rational": "sciera.evidence.rational:RationalExtractor",
    "vanilla": "sciera.evidence.vanilla:VanillaExtractor",
    "full": "sciera.evidence.full:FullExtractor",
}


def extractor_class(name: str) -> type:
    try:
        target = EXTRACTORS[name]
    except KeyError:
        raise ValueError(
            f"unknown evidence extractor {name!r}; choose one of {sorted(EXTRACTORS)}"
        ) from None
    module, _, attr = target.partition(":")
    return getattr(importlib.import_module(module), attr)


def make_extractor(name: str, settings: Settings | None = None, **kwargs: Any) -> EvidenceExtractor:
    """Build the named extractor; keyword arguments (``llm=``, ``reranker=``) override settings."""
    if settings is None:
        from sciera.settings import load_settings

        settings = load_settings()
    return extractor_class(name).from_settings(settings, **kwargs)
