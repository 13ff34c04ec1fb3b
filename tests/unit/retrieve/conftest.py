"""Fixtures for retrieval unit tests: a tiny hand-checkable corpus and a deterministic
stand-in embedder (hashed bag of words), so no model is loaded."""

from __future__ import annotations

import re
import zlib
from collections.abc import Sequence
from pathlib import Path

import numpy as np
import pytest

from sciera.corpus.store import PassageStore
from sciera.types import Document, Passage


class HashEmbedder:
    """Bag of lowercase words hashed (crc32) into ``dim`` buckets, L2-normalized."""

    name = "hash"

    def __init__(self, dim: int = 64) -> None:
        self.dim = dim
        self.calls = 0

    def _embed(self, texts: Sequence[str]) -> np.ndarray:
        self.calls += 1
        out = np.zeros((len(texts), self.dim), dtype=np.float32)
        for row, text in enumerate(texts):
            for word in re.findall(r"\w+", text.lower()):
                out[row, zlib.crc32(word.encode()) % self.dim] += 1.0
        norms = np.linalg.norm(out, axis=1, keepdims=True)
        return out / np.maximum(norms, 1e-12)

    def embed_queries(self, texts: Sequence[str]) -> np.ndarray:
        return self._embed(texts)

    def embed_passages(self, texts: Sequence[str], progress=None) -> np.ndarray:
        vectors = self._embed(texts)
        if progress is not None:
            progress(len(texts), len(texts))
        return vectors


TEXTS = {
    "d0": "the cat sat on the mat",
    "d1": "dogs chase cats",
    "d2": "a bird sings",
    "d3": "cat cat cat dog",
}


@pytest.fixture
def tiny_passages() -> list[Passage]:
    """Four one-passage documents without titles (BM25 scores computed by hand in tests)."""
    return [Passage(f"{d}#0", d, 0, "", text) for d, text in TEXTS.items()]


@pytest.fixture
def hash_embedder() -> HashEmbedder:
    return HashEmbedder()


def _make_docs(n: int, start: int = 0) -> list[Document]:
    topics = ["protein folding", "insulin resistance", "tumor suppressor", "gut microbiome"]
    return [
        Document(
            f"doc{i}",
            f"Study {i} on {topics[i % len(topics)]}",
            f"We measured {topics[i % len(topics)]} in cohort {i}. The effect was significant.",
        )
        for i in range(start, start + n)
    ]


@pytest.fixture
def small_corpus(tmp_path: Path) -> Path:
    """A real passage store with 12 short documents (one passage each)."""
    corpus = tmp_path / "corpus"
    with PassageStore.open(corpus, create=True) as store:
        store.add_documents(_make_docs(12), source="unit-test")
    return corpus


@pytest.fixture
def make_docs():
    """``make_docs(n, start)``: n short documents doc<start>..doc<start+n-1>."""
    return _make_docs
