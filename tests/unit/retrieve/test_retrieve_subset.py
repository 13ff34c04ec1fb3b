"""The document filter behind an experiment's sub-corpus: only passages of the given
documents come back, from BM25 (a real tiny corpus) and from a hybrid over two stand-in
stages, the inner stage searched deeper until ``k`` survive."""

from __future__ import annotations

from pathlib import Path

import pytest
from fixed_first_stage import Fixed
from tiny_corpus import bm25_corpus

from sciera.errors import ScieraError
from sciera.retrieve.hybrid import HybridRetriever
from sciera.retrieve.open import open_retriever
from sciera.retrieve.subset import DocumentRetriever, keep_documents
from sciera.settings import load_settings
from sciera.types import Passage


def _docs(n: int) -> list[Passage]:
    return [Passage(f"d{i}#0", f"d{i}", 0, "T", f"text {i}") for i in range(n)]


def test_only_the_documents_come_back_searching_deeper() -> None:
    inner = Fixed(_docs(100))
    ranking = DocumentRetriever(inner, {"d7", "d40", "d99"}, max_depth=100).search("q", 2)
    assert [it.passage.doc_id for it in ranking] == ["d7", "d40"]
    assert [it.rank for it in ranking] == [1, 2]
    assert inner.depths == [10, 40, 100]  # 5k: d7 alone, 20k: still d7, then the corpus


def test_a_hybrid_is_filtered_after_fusion() -> None:
    passages = _docs(30)
    hybrid = HybridRetriever(
        {"bm25": Fixed(passages), "dense": Fixed(passages[::-1])}, fusion="rrf", depth=5
    )
    ranking = DocumentRetriever(hybrid, {"d3", "d26"}, max_depth=30).search("q", 5)
    assert sorted(it.passage.doc_id for it in ranking) == ["d26", "d3"]


def test_no_filter_and_an_empty_one() -> None:
    inner = Fixed(_docs(3))
    assert keep_documents(inner, None, 3) is inner
    with pytest.raises(ScieraError, match="subcorpus: no document"):
        keep_documents(inner, [], 3)


def test_open_retriever_keeps_the_documents_of_a_real_bm25_index(tmp_path: Path) -> None:
    corpus = bm25_corpus(
        tmp_path,
        [
            ("a", "", "aspirin stroke aspirin stroke"),
            ("b", "", "aspirin stroke"),
            ("c", "", "aspirin"),
            ("d", "", "unrelated galaxies"),
        ],
    )
    full = open_retriever(corpus, "bm25", load_settings()).search("aspirin stroke", 2)
    assert [it.passage.doc_id for it in full] == ["a", "b"]
    sub = open_retriever(corpus, "bm25", load_settings(), doc_ids={"c", "d"})
    assert [it.passage.doc_id for it in sub.search("aspirin stroke", 2)] == ["c"]
