"""Batching, normalization and the embedder registry (no model is loaded)."""

from __future__ import annotations

import numpy as np
import pytest

from sciera.embed import EMBEDDERS, create_embedder
from sciera.embed.base import encode_batched, l2_normalize
from sciera.embed.registry import embedder_name
from sciera.embed.sentence_transformers import slug
from sciera.errors import ScieraError
from sciera.settings import EmbedSettings


def test_encode_batched_batches_normalizes_and_reports_progress():
    seen_batches: list[list[str]] = []

    def encode(batch: list[str]) -> np.ndarray:
        seen_batches.append(batch)
        return np.array([[len(t), 0.0] for t in batch]) * 3.0

    progress: list[tuple[int, int]] = []
    texts = ["a", "bb", "ccc", "dddd", "eeeee"]
    out = encode_batched(encode, texts, 2, 2, lambda d, t: progress.append((d, t)))
    assert seen_batches == [["a", "bb"], ["ccc", "dddd"], ["eeeee"]]
    assert progress == [(2, 5), (4, 5), (5, 5)]
    assert out.dtype == np.float32 and out.shape == (5, 2)
    assert np.allclose(out, [[1.0, 0.0]] * 5)


def test_encode_batched_empty_and_bad_batch_size():
    assert encode_batched(lambda b: np.zeros((len(b), 3)), [], 3, 4).shape == (0, 3)
    with pytest.raises(ValueError, match="batch_size"):
        encode_batched(lambda b: b, ["x"], 3, 0)


def test_l2_normalize_keeps_zero_rows():
    out = l2_normalize(np.array([[3.0, 4.0], [0.0, 0.0]]))
    assert np.allclose(out, [[0.6, 0.8], [0.0, 0.0]])


def test_registry_names_and_errors():
    assert set(EMBEDDERS) == {"minilm", "scifact-minilm", "e5", "sentence-transformers"}
    assert EmbedSettings().backend == "scifact-minilm"  # the shipped trained embedder
    with pytest.raises(ScieraError, match="needs a model"):
        create_embedder(EmbedSettings(backend="sentence-transformers"))
    bad = EmbedSettings.model_construct(backend="word2vec", model=None, batch_size=8)
    with pytest.raises(ScieraError, match="unknown embedder"):
        create_embedder(bad)


def test_embedder_names_are_filesystem_safe():
    assert embedder_name(EmbedSettings(backend="minilm")) == "minilm"
    assert embedder_name(EmbedSettings(backend="e5")) == "e5"
    assert embedder_name(EmbedSettings()) == "scifact-minilm"
    st = EmbedSettings(backend="sentence-transformers", model="BAAI/bge-small-en-v1.5")
    assert embedder_name(st) == "st-baai-bge-small-en-v1.5"
    assert slug("intfloat/e5 base!") == "intfloat-e5-base"
