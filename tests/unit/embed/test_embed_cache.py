"""The passage-embedding cache returns exactly what the embedder would, computing each text once."""

from collections.abc import Sequence

import numpy as np

from sciera.embed.cache import CachedEmbedder, embedder_identity


class CountingEmbedder:
    """Deterministic stand-in: a vector derived from the text, and a log of what was encoded."""

    name = "counting"
    dim = 4

    def __init__(self) -> None:
        self.encoded: list[str] = []

    def _vec(self, text: str) -> np.ndarray:
        v = np.array([len(text), text.count("a"), text.count("e"), 1.0], dtype=np.float32)
        return v / np.linalg.norm(v)

    def embed_queries(self, texts: Sequence[str]) -> np.ndarray:
        return np.stack([self._vec("q" + t) for t in texts])

    def embed_passages(self, texts: Sequence[str], progress=None) -> np.ndarray:
        self.encoded.extend(texts)
        if progress is not None:
            progress(len(texts), len(texts))
        return np.stack([self._vec(t) for t in texts])


def test_cache_hits_skip_the_model_and_keep_order(tmp_path):
    inner = CountingEmbedder()
    cached = CachedEmbedder(inner, tmp_path / "emb.sqlite")
    first = cached.embed_passages(["alpha", "beta"])
    assert inner.encoded == ["alpha", "beta"]
    mixed = cached.embed_passages(["beta", "gamma", "alpha"])
    assert inner.encoded == ["alpha", "beta", "gamma"]  # only the new text was encoded
    np.testing.assert_array_equal(mixed[0], first[1])
    np.testing.assert_array_equal(mixed[2], first[0])
    np.testing.assert_allclose(mixed[1], inner._vec("gamma"))
    assert (cached.hits, cached.misses) == (2, 3)


def test_cache_persists_across_instances_and_separates_models(tmp_path):
    path = tmp_path / "emb.sqlite"
    CachedEmbedder(CountingEmbedder(), path).embed_passages(["alpha"])
    again = CountingEmbedder()
    CachedEmbedder(again, path).embed_passages(["alpha"])
    assert again.encoded == []

    other = CountingEmbedder()
    other.name = "other-model"
    CachedEmbedder(other, path).embed_passages(["alpha"])
    assert other.encoded == ["alpha"]


def test_queries_are_not_cached_and_progress_reaches_total(tmp_path):
    cached = CachedEmbedder(CountingEmbedder(), tmp_path / "emb.sqlite")
    seen = []
    cached.embed_passages(["a", "b"], progress=lambda d, t: seen.append((d, t)))
    cached.embed_passages(["a", "b"], progress=lambda d, t: seen.append((d, t)))
    assert seen[-1] == (2, 2) and seen[0][1] == 2
    assert cached.embed_queries(["x"]).shape == (1, 4)
    assert "counting:4:" in embedder_identity(CountingEmbedder())
