"""Dense retrieval (stand-in embedder + real faiss index) and hybrid fusion end to end."""

from __future__ import annotations

import pytest

from sciera.errors import StaleIndexError
from sciera.retrieve.base import MemoryPassages, Retriever
from sciera.retrieve.bm25 import BM25Retriever
from sciera.retrieve.dense import DenseRetriever
from sciera.retrieve.hybrid import HybridRetriever
from sciera.settings import BM25Settings
from sciera.vectors.faiss_index import FaissIndex


@pytest.fixture
def dense(tiny_passages, hash_embedder) -> DenseRetriever:
    index = FaissIndex(hash_embedder.dim)
    index.add(
        [p.passage_id for p in tiny_passages],
        hash_embedder.embed_passages([p.contents for p in tiny_passages]),
    )
    return DenseRetriever(hash_embedder, index, MemoryPassages(tiny_passages))


def test_dense_returns_passages_with_cosine_scores(dense, hash_embedder):
    ranking = dense.search("a bird sings", 2)
    assert ranking.passage_ids[0] == "d2#0"
    assert ranking[0].score == pytest.approx(1.0, abs=1e-5)  # identical text
    assert ranking[0].passage.text == "a bird sings"
    assert ranking.stage == "dense"
    assert isinstance(dense, Retriever)


def test_dense_batches_query_embedding(dense, hash_embedder):
    before = hash_embedder.calls
    rankings = dense.search_many(["cat", "dog", "bird"], 1)
    assert hash_embedder.calls == before + 1  # one embedding call for the batch
    assert [r.query for r in rankings] == ["cat", "dog", "bird"]


def test_dense_rejects_dimension_mismatch(hash_embedder, tiny_passages):
    with pytest.raises(ValueError, match="dim"):
        DenseRetriever(hash_embedder, FaissIndex(8), MemoryPassages(tiny_passages))


def test_index_pointing_at_missing_passage_is_stale(dense):
    dense.source = MemoryPassages([])
    with pytest.raises(StaleIndexError, match="sciera index"):
        dense.search("cat", 1)


def test_hybrid_rrf_fuses_component_ranks(dense, tiny_passages):
    bm25 = BM25Retriever.build(
        tiny_passages, BM25Settings(), MemoryPassages(tiny_passages), backend="numpy"
    )
    hybrid = HybridRetriever({"bm25": bm25, "dense": dense}, depth=10)
    query = "dog"
    b, d = bm25.search(query, 10), dense.search(query, 10)
    fused = hybrid.search(query, 3)
    assert len(fused) == 3 and fused.stage == "hybrid"
    for item in fused:
        expected = 0.0
        for name, ranking in (("bm25", b), ("dense", d)):
            if item.passage_id in ranking.passage_ids:
                rank = ranking.passage_ids.index(item.passage_id) + 1
                assert item.provenance[name]["rank"] == rank
                expected += 1 / (60 + rank)
        assert item.score == pytest.approx(expected)
    assert [x.score for x in fused] == sorted((x.score for x in fused), reverse=True)


def test_hybrid_weighted_and_batch(dense, tiny_passages):
    bm25 = BM25Retriever.build(
        tiny_passages, BM25Settings(), MemoryPassages(tiny_passages), backend="numpy"
    )
    only_bm25 = HybridRetriever(
        {"bm25": bm25, "dense": dense}, fusion="weighted", weights={"bm25": 1.0, "dense": 0.0}
    )
    # dense weight 0: the order of bm25's hits is kept (min-max keeps order)
    assert only_bm25.search("cats", 3).passage_ids == bm25.search("cats", 3).passage_ids
    many = only_bm25.search_many(["cats", "bird"], 2)
    assert [r.query for r in many] == ["cats", "bird"]
    with pytest.raises(ValueError, match="unknown fusion"):
        HybridRetriever({"bm25": bm25}, fusion="borda")
