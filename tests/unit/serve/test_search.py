"""/healthz, /v1/corpora and /v1/search on the tiny BM25 corpus."""

from __future__ import annotations

from serve_helpers import SCRIPT, assert_one_line_error


def test_healthz(client):
    r = client.get("/healthz")
    assert r.status_code == 200 and r.json() == {"status": "ok"}


def test_corpora_lists_counts_and_the_bm25_index(client, corpus):
    (info,) = client.get("/v1/corpora").json()
    assert info["name"] == "tiny" and info["path"] == str(corpus) and info["default"]
    assert info["documents"] == 4 and info["passages"] == 4
    assert set(info["indexes"]) == {"bm25"}
    assert info["indexes"]["bm25"]["passages"] == 4 and not info["indexes"]["bm25"]["stale"]


def test_search_ranks_the_matching_document_first(client):
    r = client.post("/v1/search", json={"query": "albendazole filariasis", "k": 2})
    assert r.status_code == 200, r.text
    data = r.json()
    assert data["corpus"] == "tiny" and data["retriever"] == "bm25"
    assert [it["rank"] for it in data["items"]] == [1, 2]
    top = data["items"][0]
    assert top["passage_id"] == "a1#0" and top["doc_id"] == "a1"
    assert top["title"] == "Albendazole and filariasis"
    assert top["score"] > data["items"][1]["score"]
    named = client.post("/v1/search", json={"query": "curcumin", "k": 1, "corpus": "tiny"})
    assert [it["doc_id"] for it in named.json()["items"]] == ["c1"]


def test_a_passage_holding_markup_comes_back_as_unchanged_json_data(client):
    r = client.post("/v1/search", json={"query": "ivermectin scabies mites", "k": 1})
    assert r.headers["content-type"].startswith("application/json")
    (top,) = r.json()["items"]
    assert top["doc_id"] == "x1" and top["text"].startswith(SCRIPT)


def test_unknown_corpus_is_404(client):
    error = assert_one_line_error(
        client.post("/v1/search", json={"query": "x", "corpus": "nope"}), 404
    )
    assert "nope" in error and "tiny" in error


def test_a_retriever_without_its_index_is_a_400_naming_the_problem(client):
    r = client.post("/v1/search", json={"query": "albendazole", "retriever": "dense"})
    assert "index" in assert_one_line_error(r, 400)
