"""Fixtures for the HTTP API: a tiny real corpus (BM25 only) and the ScriptedLLM, so the
real app runs end to end without loading a model."""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path

import pytest
from fastapi.testclient import TestClient
from serve_helpers import DOCS, scripted
from tiny_corpus import bm25_corpus

from fakes import ScriptedLLM
from sciera.serve import create_app
from sciera.settings import Settings, load_settings


@pytest.fixture(scope="session")
def corpus(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """Four one-passage documents, ingested and BM25-indexed."""
    return bm25_corpus(tmp_path_factory.mktemp("serve"), DOCS)


@pytest.fixture
def settings(tmp_path: Path) -> Settings:
    """BM25 first stage, DeepEra with the LLM's grades (the unit conftest sets scorer=llm)."""
    return load_settings(
        home=tmp_path,
        retrieve={"retriever": "bm25"},
        rerank={"depth": 3},
        filter={"top_k": 2, "tau": 0.8},
        answer={"evidence": "deepera"},
    )


@pytest.fixture
def make_app(corpus: Path, settings: Settings) -> Callable[..., object]:
    """``make_app(llm=..., **create_app_kwargs)``: the real app on the tiny corpus."""

    def build(llm: ScriptedLLM | None = None, **kwargs):
        llm = llm or scripted()
        kwargs.setdefault("static_dir", settings.home / "no-static")
        return create_app({"tiny": corpus}, settings, llm_factory=lambda s: llm, **kwargs)

    return build


@pytest.fixture
def client(make_app) -> TestClient:
    with TestClient(make_app()) as c:
        yield c
