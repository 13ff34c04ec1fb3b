"""Fixtures of the research agent's unit tests: the tiny BM25 corpus and settings."""

from __future__ import annotations

from pathlib import Path

import pytest
from research_script import DOCS
from tiny_corpus import bm25_corpus


@pytest.fixture(scope="package")
def corpus(tmp_path_factory: pytest.TempPathFactory) -> Path:
    return bm25_corpus(tmp_path_factory.mktemp("research"), DOCS)


@pytest.fixture
def overrides(tmp_path: Path) -> dict:
    return {"home": tmp_path, "retrieve": {"retriever": "bm25"}, "filter": {"top_k": 2}}
