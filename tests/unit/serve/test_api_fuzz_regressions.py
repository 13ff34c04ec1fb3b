"""Failures the API and MCP fuzz tests found, each as the minimal generated request."""

from __future__ import annotations

from pathlib import Path

from fastapi.testclient import TestClient
from serve_helpers import assert_one_line_error
from test_mcp import call, error_text

from sciera.serve.errors import public


def test_an_error_names_the_corpus_not_its_folder(make_app, corpus: Path) -> None:
    # shrunk: {"query": "0", "retriever": "dense"} on a corpus without a dense index answered
    # 400 "no dense-... index for /tmp/.../corpus; run `sciera index --corpus /tmp/.../corpus`"
    with TestClient(make_app()) as client:
        r = client.post("/v1/search", json={"query": "0", "retriever": "dense"})
    message = assert_one_line_error(r, 400)
    assert str(corpus) not in message and "<corpus tiny>" in message, message


def test_an_mcp_tool_error_names_the_corpus_not_its_folder(corpus: Path, settings) -> None:
    from sciera.serve.mcp_server import ScieraMCP

    server = ScieraMCP({"tiny": corpus}, settings)
    text = error_text(call(server, "search", {"query": "0", "retriever": "dense"}))
    assert str(corpus) not in text and "<corpus tiny>" in text, text


def test_public_hides_folders_but_keeps_routes_and_urls() -> None:
    corpora = {"scifact": Path("/srv/corpora/scifact")}
    assert (
        public("no index for /srv/corpora/scifact; see /srv/corpora/scifact/manifest.json", corpora)
        == "no index for <corpus scifact>; see <corpus scifact>/manifest.json"
    )
    assert public("cannot read /home/u/.cache/sciera/llm.sqlite: locked") == (
        "cannot read …/llm.sqlite: locked"
    )
    kept = "POST /v1/ask failed; see http://host/a/b/c and corpora/scifact"
    assert public(kept) == kept


def test_a_value_of_another_json_type_is_refused_not_coerced(make_app) -> None:
    # shrunk (nightly, negative): {"question": "\u00fb...", "stream": 0.0} was accepted as
    # stream=false although the schema says boolean
    with TestClient(make_app()) as client:
        for route, body, field in [
            ("/v1/ask", {"question": "x", "stream": 0.0}, "stream"),
            ("/v1/verify", {"claim": "x", "stream": 1}, "stream"),
            ("/v1/search", {"query": "x", "k": "5"}, "k"),
            ("/v1/rerank", {"query": "x", "depth": 3.5}, "depth"),
            ("/v1/rerank", {"query": "x", "k": True}, "k"),
        ]:
            message = assert_one_line_error(client.post(route, json=body), 422)
            assert message.startswith(f"{field}: "), message
        # 3.0 is an integer to JSON Schema (the positive Schemathesis cases send it)
        r = client.post("/v1/search", json={"query": "albendazole", "k": 3.0})
        assert r.status_code == 200 and r.json()["items"], r.text
