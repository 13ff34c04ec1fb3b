"""The qdrant engine against the embedded engine on all of SciFact with the real default
embedder (the shipped scifact-minilm), in both stores without a server (Qdrant Edge's Rust
shard, the default, and qdrant-client's local mode, which scans sparse vectors in Python,
about 0.25 s a query here): for the first 100 test claims (40 in local mode), BM25 top-10
scores identical to 1e-4 (ids equal up to ties at the same score) and dense top-10 the
same up to ties (Edge searches its HNSW graph); hybrid search answers from one call."""

from __future__ import annotations

import shutil
from pathlib import Path

import pytest

from sciera.corpus import load_beir_queries, load_qrels
from sciera.retrieve import build_indexes
from sciera.retrieve.open import open_retriever
from sciera.settings import load_settings

pytestmark = pytest.mark.integration

SETTINGS: dict = {}  # the default embedder, whose vectors the session's corpus holds


@pytest.fixture(scope="module", params=["edge", "client"])
def engines(scifact_full_corpus: Path, tmp_path_factory: pytest.TempPathFactory, request):
    corpus = tmp_path_factory.mktemp(f"qdrant-parity-{request.param}") / "corpus"
    shutil.copytree(scifact_full_corpus, corpus)  # the store and the embedded indexes
    qdrant = load_settings(index={"engine": "qdrant", "qdrant_local": request.param}, **SETTINGS)
    build_indexes(corpus, qdrant)  # the vectors come from the embedding cache
    return corpus, load_settings(index={"engine": "embedded"}, **SETTINGS), qdrant


def _claims(claims: list[str], qdrant) -> list[str]:
    """Local mode's Python scan of sparse vectors is slow: 40 claims there."""
    return claims if qdrant.index.qdrant_local == "edge" else claims[:40]


@pytest.fixture(scope="module")
def claims(scifact_dir: Path) -> list[str]:
    texts = load_beir_queries(scifact_dir)
    return [texts[q] for q in load_qrels(scifact_dir / "qrels" / "test.tsv")][:100]


def groups(ranking) -> list[frozenset[str]]:
    """The ids of each tie group (scores within 1e-4 of the group's first), best first."""
    out: list[tuple[float, set[str]]] = []
    for item in ranking:
        if out and abs(out[-1][0] - item.score) <= 1e-4:
            out[-1][1].add(item.passage_id)
        else:
            out.append((item.score, {item.passage_id}))
    return [frozenset(ids) for _, ids in out]


@pytest.mark.parametrize("kind", ["bm25", "dense"])
def test_top10_agree_with_the_embedded_engine(engines, claims, kind):
    corpus, embedded, qdrant = engines
    claims = _claims(claims, qdrant)
    a = open_retriever(corpus, kind, embedded).search_many(claims, 10)
    b = open_retriever(corpus, kind, qdrant).search_many(claims, 10)
    differ = 0
    for ra, rb in zip(a, b, strict=True):
        sa, sb = [i.score for i in ra], [i.score for i in rb]
        assert sb == pytest.approx(sa, abs=1e-4)
        ga, gb = groups(ra), groups(rb)
        # every tie group but the last (cut by k) holds the same ids
        assert [g for g in ga[:-1]] == [g for g in gb[:-1]]
        differ += [i.passage_id for i in ra] != [i.passage_id for i in rb]
    assert differ <= len(claims) // 20, differ  # only at ties


def test_hybrid_in_one_call_finds_what_the_embedded_hybrid_finds(engines, claims):
    corpus, embedded, qdrant = engines
    claims = _claims(claims, qdrant)
    a = open_retriever(corpus, "hybrid", embedded).search_many(claims, 10)
    b = open_retriever(corpus, "hybrid", qdrant).search_many(claims, 10)
    same_top = sum(
        ra.items[0].passage_id == rb.items[0].passage_id for ra, rb in zip(a, b, strict=True)
    )
    overlap = sum(
        len({i.passage_id for i in ra} & {i.passage_id for i in rb})
        for ra, rb in zip(a, b, strict=True)
    ) / (10 * len(claims))
    assert same_top >= 0.95 * len(claims) and overlap >= 0.95, (same_top, overlap)
