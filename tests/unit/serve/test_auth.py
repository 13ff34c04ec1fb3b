"""The API key guards every /v1 route (and only those); CORS is off unless origins are given."""

from __future__ import annotations

import pytest
from fastapi.testclient import TestClient
from serve_helpers import assert_one_line_error

from sciera.serve.auth import key_matches, presented_key

KEY = "s3cret-key"
SEARCH = {"query": "albendazole", "k": 1}


@pytest.fixture
def keyed(make_app):
    with TestClient(make_app(api_key=KEY)) as c:
        yield c


def test_missing_or_wrong_key_is_401(keyed):
    assert "missing API key" in assert_one_line_error(keyed.post("/v1/search", json=SEARCH), 401)
    wrong = keyed.post("/v1/search", json=SEARCH, headers={"X-API-Key": KEY + "x"})
    assert "wrong API key" in assert_one_line_error(wrong, 401)
    bearer_wrong = {"Authorization": "Bearer " + KEY[:-1]}
    assert_one_line_error(keyed.get("/v1/corpora", headers=bearer_wrong), 401)
    assert keyed.get("/v1/corpora").headers["www-authenticate"] == "Bearer"


def test_the_key_is_checked_before_the_request_is_read(keyed):
    # no hint about the body or whether the route exists
    assert_one_line_error(keyed.post("/v1/search", content=b"{bad json"), 401)
    assert_one_line_error(keyed.get("/v1/no-such-route"), 401)
    assert_one_line_error(keyed.get("/v1/experiments"), 401)


def test_the_right_key_in_either_header_is_let_in(keyed):
    for headers in ({"Authorization": f"Bearer {KEY}"}, {"X-API-Key": KEY}):
        r = keyed.post("/v1/search", json=SEARCH, headers=headers)
        assert r.status_code == 200 and r.json()["items"][0]["doc_id"] == "a1"


def test_health_docs_and_page_stay_open(keyed):
    assert keyed.get("/healthz").status_code == 200
    spec = keyed.get("/openapi.json").json()
    assert spec["components"]["securitySchemes"]["APIKeyHeader"]["name"] == "X-API-Key"
    assert keyed.get("/").status_code == 404  # no page installed, but not a 401


def test_presented_key_and_constant_time_match():
    assert presented_key({"authorization": "bearer abc"}) == "abc"
    assert presented_key({"authorization": "Basic abc", "x-api-key": "k"}) == "k"
    assert presented_key({}) is None
    assert key_matches("abc", "abc") and not key_matches("abd", "abc")
    assert not key_matches(None, "abc") and not key_matches("", "abc")
    # a non-ASCII key as a client sends it: UTF-8 bytes, seen by ASGI as Latin-1 text
    assert key_matches("clé".encode().decode("latin-1"), "clé")


def test_cors_is_off_by_default_and_on_for_the_given_origin(client, make_app):
    preflight = {
        "Origin": "https://lab.example",
        "Access-Control-Request-Method": "POST",
        "Access-Control-Request-Headers": "x-api-key,content-type",
    }
    off = client.options("/v1/search", headers=preflight)
    assert "access-control-allow-origin" not in off.headers
    app = make_app(api_key=KEY, cors_origins=["https://lab.example"])
    with TestClient(app) as c:
        r = c.options("/v1/search", headers=preflight)  # answered without the key
        assert r.status_code == 200
        assert r.headers["access-control-allow-origin"] == "https://lab.example"
        other = c.options("/v1/search", headers={**preflight, "Origin": "https://evil.example"})
        assert "access-control-allow-origin" not in other.headers
        denied = c.get("/v1/corpora", headers={"Origin": "https://lab.example"})
        assert denied.status_code == 401  # and the browser may read why:
        assert denied.headers["access-control-allow-origin"] == "https://lab.example"
