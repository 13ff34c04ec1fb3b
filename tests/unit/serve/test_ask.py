"""/v1/ask as JSON and as Server-Sent Events, and /v1/rerank, with the scripted LLM."""

from __future__ import annotations

import json

from fastapi.testclient import TestClient
from serve_helpers import ANSWER, Q, scripted

from fakes import ScriptedLLM
from sciera.errors import ScieraError


def read_events(response) -> list[tuple[str, dict]]:
    """(event, parsed data) pairs of an SSE body; every frame must be event + data."""
    events = []
    for frame in response.text.split("\n\n"):
        if not frame.strip():
            continue
        lines = frame.split("\n")
        assert len(lines) == 2 and lines[0].startswith("event: "), frame
        assert lines[1].startswith("data: "), frame
        events.append((lines[0][7:], json.loads(lines[1][6:])))
    return events


def test_ask_returns_the_cited_answer_as_json(client):
    r = client.post("/v1/ask", json={"question": Q})
    assert r.status_code == 200, r.text
    assert r.headers["content-type"].startswith("application/json")
    data = r.json()
    assert data["text"] == ANSWER and data["question_type"] == "yesno"
    assert [c["passage_id"] for c in data["citations"]] == ["a1#0"]
    assert [e["summary"] for e in data["evidence"]] == ["Albendazole treats lymphatic filariasis."]
    rows = {row["passage_id"]: row for row in data["trace"]["pipeline"]["candidates"]}
    assert rows["a1#0"]["kept"] and not rows["m1#0"]["kept"]


def test_ask_streams_the_four_stage_events_in_order(client):
    with client.stream("POST", "/v1/ask", json={"question": Q, "stream": True}) as r:
        assert r.status_code == 200
        assert r.headers["content-type"].startswith("text/event-stream")
        r.read()
    events = read_events(r)
    assert [name for name, _ in events] == ["retrieved", "reranked", "evidence", "answer"]
    data = dict(events)
    assert data["retrieved"]["candidates"][0]["passage_id"] == "a1#0"
    assert data["reranked"]["trace"]["intent"]["intent"] == "factual"
    assert [r["kept"] for r in data["reranked"]["candidates"]][:1] == [True]
    assert data["evidence"]["evidence"][0]["passage_id"] == "a1#0"
    assert data["answer"]["text"] == ANSWER


def test_accept_header_asks_for_the_stream_too(client):
    r = client.post("/v1/ask", json={"question": Q}, headers={"Accept": "text/event-stream"})
    assert [name for name, _ in read_events(r)][-1] == "answer"


def failing() -> ScriptedLLM:
    """Fails at the first LLM call (DeepEra's intent), after retrieval."""
    return ScriptedLLM().on("Research question", raises=ScieraError("the LLM server is down"))


def test_a_failure_mid_stream_is_an_error_event(make_app):
    with TestClient(make_app(llm=failing())) as c:
        events = read_events(c.post("/v1/ask", json={"question": Q, "stream": True}))
    assert [name for name, _ in events] == ["retrieved", "error"]
    assert events[-1][1] == {"error": "the LLM server is down"}


def test_a_library_error_in_json_mode_is_a_400(make_app):
    with TestClient(make_app(llm=failing())) as c:
        r = c.post("/v1/ask", json={"question": Q})
    assert r.status_code == 400 and r.json() == {"error": "the LLM server is down"}


def test_rerank_with_deepera_lists_kept_and_filtered(client):
    body = {"query": Q, "depth": 3, "k": 5, "reranker": "deepera"}
    data = client.post("/v1/rerank", json=body).json()
    assert [it["passage_id"] for it in data["items"]] == ["a1#0"]
    assert data["items"][0]["provenance"]["deepera"]["score"] == data["items"][0]["score"]
    assert {f["passage_id"] for f in data["filtered"]} == {"c1#0", "m1#0"}
    assert all("tau" in f["why"] for f in data["filtered"])
    assert data["filter"] == {"tau": 0.8, "top_k": 2, "calibrated": True}
    assert data["trace"]["intent"]["intent"] == "factual"


def test_rerank_without_an_llm_keeps_k_and_calls_no_llm(make_app):
    llm = scripted()
    with TestClient(make_app(llm=llm)) as c:
        body = {"query": "filariasis vectors", "depth": 3, "k": 2, "reranker": "bm25"}
        data = c.post("/v1/rerank", json=body).json()
    assert len(data["items"]) == 2 and data["filtered"] == [] and data["trace"] is None
    assert data["items"][0]["passage_id"] == "m1#0"
    assert llm.calls == []
