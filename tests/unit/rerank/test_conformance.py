from __future__ import annotations

from dataclasses import replace

import pytest
from conformance import check_reranker

from conftest import QUERY, HashEmbedder, OverlapLLM, make_ranking
from sciera.rerank.bm25 import BM25Reranker
from sciera.rerank.deepera.agent import DeepEraReranker
from sciera.rerank.embedding import EmbeddingReranker
from sciera.rerank.ensemble import EnsembleReranker
from sciera.rerank.llm_listwise import LLMListwiseReranker
from sciera.rerank.llm_pointwise import LLMGradedReranker, LLMPointwiseReranker
from sciera.rerank.registry import RERANKERS
from sciera.types import Ranking


def build(name: str):
    llm = OverlapLLM()
    return {
        "bm25": BM25Reranker,
        "embedding": lambda: EmbeddingReranker(HashEmbedder()),
        "llm_pointwise": lambda: LLMPointwiseReranker(llm),
        "llm_graded": lambda: LLMGradedReranker(llm),
        "llm_listwise": lambda: LLMListwiseReranker(llm, window=3, step=2),
        "ensemble": lambda: EnsembleReranker(
            [(EmbeddingReranker(HashEmbedder()), 1.0), (LLMListwiseReranker(llm), 7.0)]
        ),
        "deepera": lambda: DeepEraReranker(llm, tau=0.5, top_k=2),
        "deepera_unfiltered": lambda: DeepEraReranker(llm, tau=None, top_k=None),
    }[name]()


UNIT_BACKENDS = [
    "bm25",
    "embedding",
    "llm_pointwise",
    "llm_graded",
    "llm_listwise",
    "ensemble",
    "deepera",
    "deepera_unfiltered",
]
INTEGRATION_BACKENDS = {"cross_encoder"}  # tests/integration/test_rerank_cross_encoder.py


def test_every_registered_backend_is_covered():
    covered = {n.removesuffix("_unfiltered") for n in UNIT_BACKENDS} | INTEGRATION_BACKENDS
    assert covered == set(RERANKERS)


@pytest.mark.parametrize("name", UNIT_BACKENDS)
def test_conformance(name):
    out = check_reranker(build(name), make_ranking())
    assert len(out) > 0
    traced, trace = build(name).rerank_traced(QUERY, make_ranking())
    assert traced.passage_ids == out.passage_ids and isinstance(trace, dict)


@pytest.mark.parametrize("name", [n for n in UNIT_BACKENDS if n != "embedding"])
def test_word_overlap_signal_puts_the_matching_passage_first(name):
    # The stand-in LLM and embedder prefer d2 (all query words); every backend must follow.
    out = build(name).rerank(make_ranking().query, make_ranking())
    assert out.items[0].passage_id == "d2#0"


def test_provenance_keeps_first_stage_score_and_rank():
    out = build("llm_graded").rerank(make_ranking().query, make_ranking())
    d2 = next(it for it in out.items if it.passage_id == "d2#0")
    assert d2.provenance["bm25"] == {"score": 9.0, "rank": 2, "terms": ["x"]}  # kept as given
    assert d2.provenance["llm_graded"]["score"] == d2.score == 1.0
    bare = Ranking(QUERY, tuple(replace(it, provenance={}) for it in make_ranking()), "dense")
    d2 = next(it for it in build("llm_graded").rerank(QUERY, bare) if it.passage_id == "d2#0")
    assert d2.provenance["dense"] == {"score": 9.0, "rank": 2}  # added when absent
