"""``POST /v1/verify`` (JSON and streamed) and the MCP ``verify`` tool: the same verification
as ``sciera verify``, with stand-in rationale selector and verdict models registered by
name (the trained ones are tested in the integration tier)."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from fastapi.testclient import TestClient
from test_mcp import call
from tiny_corpus import bm25_corpus

from fakes import ScriptedLLM
from sciera.serve.app import create_app
from sciera.serve.mcp_server import ScieraMCP
from sciera.settings import load_settings

DOCS = [
    ("a1", "Aspirin trial", "Aspirin lowered adenoma risk in a randomized trial. Doses were low."),
    ("m1", "Malaria", "Malaria vectors transmit parasites."),
]
CLAIM = "Aspirin reduces the risk of colorectal adenoma."


@pytest.fixture(scope="module")
def aspirin(tmp_path_factory: pytest.TempPathFactory) -> Path:
    return bm25_corpus(tmp_path_factory.mktemp("verify-api"), DOCS)


@pytest.fixture
def verifying(tmp_path: Path):
    return load_settings(
        home=tmp_path,
        retrieve={"retriever": "bm25"},
        rerank={"reranker": "none", "depth": 2},
        verify={"selector": "overlap", "verdict": "keyword", "abstracts": 2},
    )


def never() -> ScriptedLLM:
    return ScriptedLLM()  # no rule: any LLM call would fail the request


def test_verify_returns_the_verdict_with_verbatim_rationales(aspirin, verifying, registered):
    llm = never()
    app = create_app({"tiny": aspirin}, verifying, llm_factory=lambda s: llm)
    with TestClient(app) as client:
        r = client.post("/v1/verify", json={"claim": CLAIM})
    assert r.status_code == 200, r.text
    data = r.json()
    assert data["label"] == "SUPPORT" and data["supporting"] == ["a1"]
    a1 = data["abstracts"][0]
    assert (a1["doc_id"], a1["label"]) == ("a1", "SUPPORT")
    assert a1["rationales"] == [
        {"index": 0, "text": "Aspirin lowered adenoma risk in a randomized trial.", "score": 0.9}
    ]
    assert llm.calls == []  # no stage called the LLM


def test_verify_streams_its_stage_events(aspirin, verifying, registered):
    app = create_app({"tiny": aspirin}, verifying, llm_factory=lambda s: never())
    with (
        TestClient(app) as client,
        client.stream("POST", "/v1/verify", json={"claim": CLAIM, "stream": True}) as r,
    ):
        body = r.read().decode()
    names = [
        line.split(":", 1)[1].strip() for line in body.splitlines() if line.startswith("event:")
    ]
    assert names == ["retrieved", "reranked", "verified"]
    verified = body.split("event: verified", 1)[1].split("data:", 1)[1].split("\n", 1)[0]
    assert json.loads(verified)["label"] == "SUPPORT"


def test_a_bad_verify_request_is_a_one_line_422(aspirin, verifying, registered):
    app = create_app({"tiny": aspirin}, verifying, llm_factory=lambda s: never())
    with TestClient(app) as client:
        r = client.post("/v1/verify", json={"claim": "  "})
        unknown = client.post("/v1/verify", json={"claim": CLAIM, "corpus": "nope"})
    assert r.status_code == 422 and "claim" in r.json()["error"]
    assert unknown.status_code == 404


def test_the_mcp_verify_tool_gives_the_same_verification(aspirin, verifying, registered):
    server = ScieraMCP({"tiny": aspirin}, verifying, llm_factory=lambda s: never())
    data = call(server, "verify", {"claim": CLAIM}).structured_content
    assert data["label"] == "SUPPORT"
    assert data["abstracts"][0]["rationales"][0]["index"] == 0
