"""Every vector backend against numpy brute force, plus the protocol's edge cases."""

from __future__ import annotations

import numpy as np
import pytest

from sciera.settings import VectorSettings
from sciera.vectors import VectorIndex, create_vector_index, load_vector_index
from sciera.vectors.faiss_index import FaissIndex
from sciera.vectors.qdrant_index import QdrantIndex

DIM = 32


def _unit_rows(rng: np.random.Generator, n: int) -> np.ndarray:
    x = rng.standard_normal((n, DIM)).astype(np.float32)
    return x / np.linalg.norm(x, axis=1, keepdims=True)


@pytest.fixture(params=["faiss", "qdrant"])
def make_index(request):
    made = []

    def make() -> VectorIndex:
        index = FaissIndex(DIM) if request.param == "faiss" else QdrantIndex(DIM)
        made.append(index)
        return index

    yield make
    for index in made:
        if hasattr(index, "close"):
            index.close()


def _brute_force(base: np.ndarray, ids: list[str], queries: np.ndarray, k: int):
    scores = queries @ base.T
    order = np.argsort(-scores, axis=1, kind="stable")[:, :k]
    return [[(ids[j], float(scores[i, j])) for j in row] for i, row in enumerate(order)]


def test_top_k_matches_brute_force(make_index):
    rng = np.random.default_rng(7)
    base, queries = _unit_rows(rng, 500), _unit_rows(rng, 20)
    ids = [f"p{i}" for i in range(len(base))]
    index = make_index()
    index.add(ids[:200], base[:200])  # two add() calls: ids must stay aligned
    index.add(ids[200:], base[200:])
    assert len(index) == 500
    got = index.search(queries, 10)
    want = _brute_force(base, ids, queries, 10)
    for g, w in zip(got, want, strict=True):
        assert [pid for pid, _ in g] == [pid for pid, _ in w]
        assert [s for _, s in g] == pytest.approx([s for _, s in w], abs=1e-5)


def test_k_larger_than_index_and_empty_index(make_index):
    index = make_index()
    assert index.search(np.ones((2, DIM), np.float32), 5) == [[], []]
    rng = np.random.default_rng(1)
    index.add(["a", "b", "c"], _unit_rows(rng, 3))
    hits = index.search(_unit_rows(rng, 1), 10)
    assert len(hits) == 1 and sorted(pid for pid, _ in hits[0]) == ["a", "b", "c"]


def test_bad_input_is_rejected(make_index):
    index = make_index()
    rng = np.random.default_rng(2)
    with pytest.raises(ValueError, match="shape"):
        index.add(["a"], rng.standard_normal((1, DIM + 1)))
    with pytest.raises(ValueError, match="ids for"):
        index.add(["a", "b"], _unit_rows(rng, 3))
    with pytest.raises(ValueError, match="duplicate"):
        index.add(["a", "a"], _unit_rows(rng, 2))
    index.add(["a"], _unit_rows(rng, 1))
    with pytest.raises(ValueError, match="already in the index"):
        index.add(["a"], _unit_rows(rng, 1))


def test_save_and_load_round_trip(make_index, tmp_path):
    rng = np.random.default_rng(3)
    base, queries = _unit_rows(rng, 100), _unit_rows(rng, 5)
    ids = [f"p{i}" for i in range(100)]
    index = make_index()
    index.add(ids, base)
    before = index.search(queries, 7)
    index.save(tmp_path / "idx")
    loaded = type(index).load(tmp_path / "idx")
    try:
        assert len(loaded) == 100 and loaded.dim == DIM
        after = loaded.search(queries, 7)
        assert [[p for p, _ in h] for h in after] == [[p for p, _ in h] for h in before]
        with pytest.raises(ValueError, match="already in the index"):  # it knows its ids
            loaded.add(["p3"], base[:1])
    finally:
        if hasattr(loaded, "close"):
            loaded.close()


def test_registry_builds_on_disk_qdrant_and_reopens(tmp_path):
    rng = np.random.default_rng(4)
    base = _unit_rows(rng, 50)
    settings = VectorSettings(backend="qdrant")
    index = create_vector_index(settings, DIM, tmp_path / "dense")
    index.add([f"p{i}" for i in range(50)], base)
    index.save(tmp_path / "dense")
    index.close()
    reopened = load_vector_index("qdrant", tmp_path / "dense", settings)
    try:
        assert reopened.search(base[7], 1)[0][0][0] == "p7"
    finally:
        reopened.close()
    faiss_index = create_vector_index(VectorSettings(), DIM, tmp_path / "f")
    assert isinstance(faiss_index, FaissIndex)
