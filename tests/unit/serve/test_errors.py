"""Every bad request gets a 4xx and one line of JSON naming the problem; a crash is a
one-line 500 without the traceback."""

from __future__ import annotations

import pytest
from fastapi.testclient import TestClient
from serve_helpers import assert_one_line_error

BAD = [
    ("/v1/search", {"query": ""}, "query: "),
    ("/v1/search", {"query": " \n\t "}, "query: must not be empty"),
    ("/v1/search", {"query": "x" * 2001}, "query: "),
    ("/v1/search", {"query": "x", "k": 0}, "k: "),
    ("/v1/search", {"query": "x", "k": 1000}, "k: "),
    ("/v1/search", {"query": "x", "k": "ten"}, "k: "),
    ("/v1/search", {"query": 5}, "query: "),
    ("/v1/search", {"query": "x", "retriever": "grep"}, "retriever: "),
    ("/v1/search", {"query": "x", "kk": 3}, "kk: "),
    ("/v1/search", {}, "query: "),
    ("/v1/search", ["query"], "body: "),
    ("/v1/rerank", {"query": "x", "depth": 0}, "depth: "),
    ("/v1/rerank", {"query": "x", "depth": 1001}, "depth: "),
    ("/v1/rerank", {"query": "x", "reranker": "magic"}, "reranker: unknown reranker 'magic'"),
    ("/v1/ask", {"question": "  "}, "question: must not be empty"),
    ("/v1/ask", {"question": "why?", "question_type": "essay"}, "question_type: "),
    ("/v1/ask", {"question": "why?", "stream": "maybe"}, "stream: "),
]


@pytest.mark.parametrize(("path", "body", "starts"), BAD)
def test_bad_request_is_a_one_line_422_naming_the_field(client, path, body, starts):
    error = assert_one_line_error(client.post(path, json=body), 422)
    assert error.startswith(starts), error


def test_several_problems_name_the_first_and_count_the_rest(client):
    error = assert_one_line_error(client.post("/v1/search", json={"query": "", "k": 0}), 422)
    assert error.startswith("query: ") and error.endswith("(and 1 more)")


def test_malformed_json_and_a_missing_body(client):
    json_type = {"content-type": "application/json"}
    r = client.post("/v1/search", content=b'{"query": ', headers=json_type)
    assert assert_one_line_error(r, 422).startswith("body: invalid JSON")
    assert assert_one_line_error(client.post("/v1/search"), 422).startswith("body: ")


def test_an_oversized_body_is_a_413_however_it_is_sent(client):
    big = {"query": "x", "pad": "y" * 70_000}
    assert "over" in assert_one_line_error(client.post("/v1/search", json=big), 413)
    chunks = (b'{"query": "' + b"y" * 8192 for _ in range(10))  # chunked: no Content-Length
    assert_one_line_error(client.post("/v1/search", content=chunks), 413)


def test_unknown_route_and_wrong_method_are_one_line_errors(client):
    assert_one_line_error(client.get("/v1/nothing"), 404)
    assert_one_line_error(client.get("/v1/search"), 405)


def test_no_web_page_installed_is_a_404(client):
    assert "web page" in assert_one_line_error(client.get("/"), 404)


def test_the_web_page_is_served_when_installed(make_app, tmp_path):
    (tmp_path / "index.html").write_text("<!doctype html><title>sciera</title>")
    with TestClient(make_app(static_dir=tmp_path)) as c:
        r = c.get("/")
        assert r.status_code == 200 and r.headers["content-type"].startswith("text/html")
        assert "<title>sciera</title>" in r.text
        assert c.get("/static/index.html").status_code == 200


def test_a_crash_is_a_500_without_the_traceback_or_the_message(make_app, caplog):
    def broken(corpus, settings, llm):
        raise RuntimeError("secret internals")

    app = make_app(pipeline_factory=broken)
    with TestClient(app, raise_server_exceptions=False) as c:
        r = c.post("/v1/ask", json={"question": "why?"})
    error = assert_one_line_error(r, 500)
    assert "secret" not in r.text and "internal error" in error
    assert any("secret internals" in str(rec.exc_info[1]) for rec in caplog.records if rec.exc_info)


def test_openapi_schema_lists_the_routes_and_the_limits(client):
    spec = client.get("/openapi.json").json()
    assert {"/v1/search", "/v1/rerank", "/v1/ask", "/v1/corpora", "/v1/experiments"} <= set(
        spec["paths"]
    )
    k = spec["components"]["schemas"]["SearchRequest"]["properties"]["k"]
    assert (k["minimum"], k["maximum"]) == (1, 100)
