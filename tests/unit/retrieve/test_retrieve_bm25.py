"""BM25 (bm25s, Lucene variant) on a four-document corpus, checked by hand.

Tokens after stopwords + stemming: d0 = cat sat mat (3), d1 = dog chase cat (3),
d2 = bird sing (2), d3 = cat cat cat dog (4); avgdl = 3, N = 4, k1 = 0.9, b = 0.4.
Lucene: idf = ln(1 + (N - df + 0.5) / (df + 0.5)); tf part = tf / (tf + k1 (1 - b + b dl/avgdl)).
"""

from __future__ import annotations

import math

import pytest

from sciera.retrieve.base import MemoryPassages
from sciera.retrieve.bm25 import BM25Retriever
from sciera.retrieve.tokenize import BM25Tokenizer
from sciera.settings import BM25Settings


def _norm(dl: int) -> float:
    return 0.9 * (1 - 0.4 + 0.4 * dl / 3)


IDF_CAT = math.log(1 + (4 - 3 + 0.5) / (3 + 0.5))
IDF_DOG = math.log(1 + (4 - 2 + 0.5) / (2 + 0.5))


@pytest.fixture
def bm25(tiny_passages) -> BM25Retriever:
    # numpy backend: numba's JIT compile costs seconds; the numba path is checked
    # against numpy in tests/integration/test_retrieval_scifact.py
    return BM25Retriever.build(
        tiny_passages, BM25Settings(), MemoryPassages(tiny_passages), backend="numpy"
    )


def test_tokenizer_stems_and_drops_stopwords():
    assert BM25Tokenizer(BM25Settings()).tokens("The cats are running, a lot!") == [
        "cat",
        "run",
        "lot",
    ]
    raw = BM25Tokenizer(BM25Settings(stemmer=None, stopwords=None))
    assert raw.tokens("The cats are running") == ["the", "cats", "are", "running"]


def test_scores_match_hand_computed_lucene_bm25(bm25):
    ranking = bm25.search("cats", 10)
    got = {item.passage_id: item.score for item in ranking}
    assert ranking.passage_ids[0] == "d3#0"
    assert got["d3#0"] == pytest.approx(IDF_CAT * 3 / (3 + _norm(4)), rel=1e-5)
    assert got["d0#0"] == pytest.approx(IDF_CAT * 1 / (1 + _norm(3)), rel=1e-5)
    assert got["d1#0"] == pytest.approx(IDF_CAT * 1 / (1 + _norm(3)), rel=1e-5)
    assert "d2#0" not in got  # no query term: not returned
    assert ranking.stage == "bm25"
    assert ranking[0].passage.text == "cat cat cat dog"


def test_length_normalization_orders_single_hits(bm25):
    ranking = bm25.search("dog", 10)
    assert ranking.passage_ids == ["d1#0", "d3#0"]  # same tf, d1 is shorter
    assert ranking[0].score == pytest.approx(IDF_DOG / (1 + _norm(3)), rel=1e-5)
    assert ranking[1].score == pytest.approx(IDF_DOG / (1 + _norm(4)), rel=1e-5)


def test_batch_equals_single_and_empty_queries(bm25):
    queries = ["cats", "the a of", "zebra", "bird dog"]
    many = bm25.search_many(queries, 2)
    assert [r.passage_ids for r in many] == [bm25.search(q, 2).passage_ids for q in queries]
    assert len(many[0]) == 2
    assert len(many[1]) == 0 and len(many[2]) == 0  # only stopwords / unknown words
    assert bm25.search_many([], 5) == []


def test_unknown_backend_is_rejected(tiny_passages):
    with pytest.raises(ValueError, match="unknown bm25 backend"):
        BM25Retriever.build(tiny_passages, BM25Settings(), MemoryPassages([]), backend="jax")


def test_parameters_change_scores(tiny_passages):
    source = MemoryPassages(tiny_passages)
    no_len_norm = BM25Retriever.build(tiny_passages, BM25Settings(b=0.0), source)
    ranking = no_len_norm.search("dog", 10)
    assert ranking[0].score == pytest.approx(ranking[1].score)  # b=0: length ignored
    assert ranking[0].score == pytest.approx(IDF_DOG / (1 + 0.9), rel=1e-5)


def test_save_load_round_trip(bm25, tiny_passages, tmp_path):
    bm25.save(tmp_path / "bm25")
    loaded = BM25Retriever.load(tmp_path / "bm25", MemoryPassages(tiny_passages))
    assert loaded.settings == bm25.settings
    for query in ["cats", "dog", "bird sings"]:
        a, b = bm25.search(query, 4), loaded.search(query, 4)
        assert a.passage_ids == b.passage_ids
        assert [x.score for x in a] == pytest.approx([x.score for x in b])


def test_memory_mapped_load_scores_the_same(bm25, tiny_passages, tmp_path):
    import numpy as np

    bm25.save(tmp_path / "bm25")
    mapped = BM25Retriever.load(tmp_path / "bm25", MemoryPassages(tiny_passages), mmap=True)
    assert isinstance(mapped._model.scores["data"], np.memmap)
    for query in ["cats", "dog", "bird sings"]:
        a, b = bm25.search(query, 4), mapped.search(query, 4)
        assert a.passage_ids == b.passage_ids
        assert [x.score for x in a] == pytest.approx([x.score for x in b])


def test_mmap_is_not_an_index_parameter():
    from sciera.retrieve.manifest import bm25_params
    from sciera.settings import load_settings

    on = load_settings(bm25={"mmap": True})
    assert on.bm25.mmap and bm25_params(on) == bm25_params(load_settings())
