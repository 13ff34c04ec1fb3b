"""The embedding reranker built from settings: embedder overrides and the vector cache."""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pytest

import sciera.embed.registry as embed_registry
from sciera.embed.cache import CachedEmbedder
from sciera.rerank.embedding import EmbeddingReranker
from sciera.settings import load_settings


class FakeEmbedder:
    dim = 3

    def __init__(self, name: str) -> None:
        self.name = name

    def embed_queries(self, texts):
        return np.ones((len(texts), 3), dtype=np.float32)

    def embed_passages(self, texts, progress=None):
        return np.ones((len(texts), 3), dtype=np.float32)


@pytest.fixture
def built(monkeypatch: pytest.MonkeyPatch) -> list:
    seen: list = []

    def fake_create(settings, home=None):
        seen.append(settings)
        return FakeEmbedder(settings.backend)

    monkeypatch.setattr(embed_registry, "create_embedder", fake_create)
    return seen


def test_backend_override_and_cache(built: list, tmp_path: Path) -> None:
    settings = load_settings(home=tmp_path)
    reranker = EmbeddingReranker.from_settings(settings, backend="e5")
    assert [s.backend for s in built] == ["e5"]
    assert isinstance(reranker.embedder, CachedEmbedder)
    assert reranker.embedder.inner.name == "e5"


def test_cache_off_and_default_backend(built: list, tmp_path: Path) -> None:
    settings = load_settings(home=tmp_path, embed={"cache": False})
    reranker = EmbeddingReranker.from_settings(settings)
    assert built[0].backend == settings.embed.backend
    assert isinstance(reranker.embedder, FakeEmbedder)


def test_unknown_parameter_is_refused(built: list, tmp_path: Path) -> None:
    with pytest.raises(ValueError, match=r"unknown parameters \['dims'\]"):
        EmbeddingReranker.from_settings(load_settings(home=tmp_path), dims=3)
    assert built == []
