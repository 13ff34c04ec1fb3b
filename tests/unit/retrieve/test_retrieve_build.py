"""Index build + manifest + stale-index detection on a real passage store.

Dense indexes use the stand-in embedder (passed as ``embedder=``), so no model loads.
"""

from __future__ import annotations

import json

import pytest

from sciera.corpus.store import PassageStore
from sciera.errors import ScieraError, StaleIndexError
from sciera.retrieve import build_indexes, open_retriever
from sciera.retrieve.manifest import read_manifest
from sciera.settings import load_settings


@pytest.fixture(autouse=True)
def _private_home(tmp_path, monkeypatch):
    """The passage-vector cache lives under SCIERA_HOME: keep it inside the test."""
    monkeypatch.setenv("SCIERA_HOME", str(tmp_path / "home"))


def test_build_writes_indexes_and_manifest(small_corpus, hash_embedder):
    progress: list[tuple[str, int, int]] = []
    manifest = build_indexes(
        small_corpus,
        load_settings(),
        embedder=hash_embedder,
        progress=lambda *a: progress.append(a),
    )
    assert set(manifest.records) == {"bm25", "dense-hash"}
    assert (small_corpus / "index" / "bm25" / "passage_ids.json").is_file()
    assert (small_corpus / "index" / "dense-hash" / "index.faiss").is_file()
    on_disk = json.loads((small_corpus / "index" / "manifest.json").read_text())
    bm25 = on_disk["indexes"]["bm25"]
    with PassageStore.open(small_corpus) as store:
        assert bm25["fingerprint"] == store.fingerprint()
        assert bm25["passages"] == store.count_passages() == 12
    assert bm25["params"]["k1"] == 0.9 and bm25["params"]["b"] == 0.4
    assert bm25["params"]["method"] == "lucene"
    assert "bm25s" in bm25["libraries"] and bm25["built_at"]
    dense = on_disk["indexes"]["dense-hash"]
    assert dense["params"] == {
        "embedder": "hash",
        "dim": 64,
        "vectors": "faiss",
        "qdrant_url": None,
    }
    assert ("bm25", 12, 12) in progress and ("dense", 12, 12) in progress


def test_open_and_search_each_retriever(small_corpus, hash_embedder):
    settings = load_settings()
    build_indexes(small_corpus, settings, embedder=hash_embedder)
    for name in ("bm25", "dense", "hybrid"):
        retriever = open_retriever(small_corpus, name, settings, embedder=hash_embedder)
        ranking = retriever.search("insulin resistance cohort", 3)
        assert len(ranking) == 3
        assert "insulin" in ranking[0].passage.contents  # real passages from the store
        assert ranking[0].passage.doc_id == ranking[0].passage_id.split("#")[0]


def test_ingest_more_then_search_is_stale(small_corpus, hash_embedder, make_docs):
    settings = load_settings()
    build_indexes(small_corpus, settings, embedder=hash_embedder)
    open_retriever(small_corpus, "bm25", settings).search("protein", 2)
    with PassageStore.open(small_corpus) as store:
        store.add_documents(make_docs(3, start=100), source="unit-test-2")
    for name in ("bm25", "dense", "hybrid"):
        with pytest.raises(StaleIndexError, match=r"sciera index --corpus") as err:
            open_retriever(small_corpus, name, settings, embedder=hash_embedder)
        assert "12 passages then, 15 now" in str(err.value)
    build_indexes(small_corpus, settings, embedder=hash_embedder)
    ranking = open_retriever(small_corpus, "bm25", settings).search("cohort 101", 1)
    assert ranking[0].passage.doc_id == "doc101"  # the re-built index sees new passages


def test_missing_index_and_changed_settings_are_stale(small_corpus, hash_embedder):
    with pytest.raises(StaleIndexError, match=r"no index found.*sciera index --corpus"):
        open_retriever(small_corpus, "bm25", load_settings())
    build_indexes(small_corpus, load_settings(), which=["bm25"])
    with pytest.raises(StaleIndexError, match="no dense-hash index"):
        open_retriever(small_corpus, "dense", load_settings(), embedder=hash_embedder)
    with pytest.raises(StaleIndexError, match=r"k1=0.9 \(settings: 1.2\)"):
        open_retriever(small_corpus, "bm25", load_settings(bm25={"k1": 1.2}))
    manifest = read_manifest(small_corpus)
    assert manifest is not None and set(manifest.records) == {"bm25"}


def test_rebuild_one_kind_keeps_the_other_record(small_corpus, hash_embedder):
    build_indexes(small_corpus, load_settings(), embedder=hash_embedder)
    first = read_manifest(small_corpus).records["dense-hash"]
    build_indexes(small_corpus, load_settings(bm25={"k1": 1.5}), which=["bm25"])
    manifest = read_manifest(small_corpus)
    assert manifest.records["dense-hash"] == first
    assert manifest.records["bm25"].params["k1"] == 1.5


def test_build_errors(tmp_path, hash_embedder):
    with pytest.raises(ScieraError, match="no passage store"):
        build_indexes(tmp_path / "nowhere", load_settings(), which=["bm25"])
    PassageStore.open(tmp_path / "empty", create=True).close()
    with pytest.raises(ScieraError, match="no passages"):
        build_indexes(tmp_path / "empty", load_settings(), which=["bm25"])
    with pytest.raises(ScieraError, match="unknown index kind"):
        build_indexes(tmp_path / "empty", load_settings(), which=["splade"])
    with pytest.raises(ScieraError, match="unknown retriever"):
        open_retriever(tmp_path / "empty", "splade", load_settings())
