"""``sections`` over HTTP and MCP: search, rerank, ask and verify keep to the named sections
of full-text papers, as the CLI's ``--section`` does (real JATS articles, BM25, stand-in
verification models, no LLM)."""

from __future__ import annotations

from pathlib import Path

import pytest
from fastapi.testclient import TestClient
from serve_helpers import assert_one_line_error
from test_mcp import call
from tiny_corpus import fulltext_corpus

from fakes import ScriptedLLM
from sciera.retrieve.sections import in_sections
from sciera.serve.app import create_app
from sciera.serve.mcp_server import ScieraMCP
from sciera.settings import load_settings
from sciera.types import Passage

PAPERS = ("elife-04177.xml", "pntd.0002065.nxml", "pone.0046493.nxml")
QUERY = "mosquito larvae sampling methods"


@pytest.fixture(scope="module")
def papers(tmp_path_factory: pytest.TempPathFactory) -> Path:
    return fulltext_corpus(
        tmp_path_factory.mktemp("papers-api"),
        ("elife-04177.xml", "pntd.0002065.nxml", "pone.0046493.nxml"),
    )


@pytest.fixture
def settings(tmp_path: Path):
    return load_settings(
        home=tmp_path,
        retrieve={"retriever": "bm25"},
        rerank={"reranker": "none", "depth": 10},
        filter={"top_k": 3},
        answer={"evidence": "full", "decision_only": True},
        verify={"selector": "overlap", "verdict": "keyword", "abstracts": 3},
    )


def kinds_of(rows: list[dict]) -> list[bool]:
    """Whether each returned passage is in the methods (its section as stored)."""
    return [
        in_sections(
            Passage(r["passage_id"], "", 0, "", "", section=r.get("section") or ""),
            frozenset({"methods"}),
        )
        for r in rows
    ]


def test_search_and_rerank_keep_to_the_sections(papers, settings):
    app = create_app({"papers": papers}, settings, llm_factory=lambda s: ScriptedLLM())
    with TestClient(app) as client:
        every = client.post("/v1/search", json={"query": QUERY, "k": 20}).json()["items"]
        methods = client.post(
            "/v1/search", json={"query": QUERY, "k": 20, "sections": ["methods"]}
        ).json()["items"]
        body = {"query": QUERY, "k": 5, "reranker": "bm25", "sections": ["methods"]}
        reranked = client.post("/v1/rerank", json=body)
        bad = client.post("/v1/search", json={"query": QUERY, "sections": ["method"]})
        empty = client.post("/v1/search", json={"query": QUERY, "sections": []})
    assert not all(kinds_of(every))  # the question reaches other sections too
    assert methods and all(kinds_of(methods)) and all(r["section"] for r in methods)
    assert reranked.status_code == 200 and reranked.json()["items"]
    assert "sections" in assert_one_line_error(bad, 422)
    assert_one_line_error(empty, 422)


def test_ask_verify_and_the_mcp_tools_take_sections(papers, settings, registered):
    llm = ScriptedLLM(default_probs={"yes": 0.9, "no": 0.05, "maybe": 0.05}).on(
        "You explain answers", {"answer": "They were [1]."}
    )
    app = create_app({"papers": papers}, settings, llm_factory=lambda s: llm)
    with TestClient(app) as client:
        verified = client.post(
            "/v1/verify", json={"claim": "Larvae were sampled.", "sections": ["methods"]}
        )
        asked = client.post(
            "/v1/ask", json={"question": "Were larvae sampled?", "sections": ["methods"]}
        )
    assert verified.status_code == 200, verified.text
    assert asked.status_code == 200, asked.text
    for e in asked.json()["evidence"]:
        assert e.get("section") and kinds_of([e])[0], e
    server = ScieraMCP({"papers": papers}, settings, llm_factory=lambda s: ScriptedLLM())
    found = call(server, "search", {"query": QUERY, "sections": ["results"]})
    assert not found.is_error and found.structured_content["items"]
    refused = call(server, "search", {"query": QUERY, "sections": ["nowhere"]})
    assert refused.is_error


def test_rerank_without_a_reranker_on_a_server_set_up_without_one_is_a_400(papers, settings):
    """Regression: the server's rerank.reranker 'none' reached make_reranker: a 500."""
    app = create_app({"papers": papers}, settings, llm_factory=lambda s: ScriptedLLM())
    with TestClient(app) as client:
        r = client.post("/v1/rerank", json={"query": QUERY})
    assert "name one in 'reranker'" in assert_one_line_error(r, 400)
