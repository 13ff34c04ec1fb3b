"""The LLM queue over HTTP: a full queue is a 503 with Retry-After while retrieval keeps
working, and a client that disconnects cancels its work (waiting, or between stages)."""

from __future__ import annotations

import json
import threading
from collections.abc import Callable
from concurrent.futures import ThreadPoolExecutor
from typing import Any

import anyio
from fastapi.testclient import TestClient
from serve_helpers import ANSWER, Q, assert_one_line_error, scripted

OTHER_Q = "Is ivermectin used against scabies?"


def test_full_queue_is_a_503_with_retry_after_and_search_still_works(make_app):
    block, entered = threading.Event(), threading.Event()
    with TestClient(make_app(llm=scripted(block, entered), queue_size=0)) as c:
        with ThreadPoolExecutor(1) as pool:
            first = pool.submit(c.post, "/v1/ask", json={"question": Q})
            assert entered.wait(5)
            try:
                for body in ({"question": Q}, {"question": Q, "stream": True}):
                    busy = c.post("/v1/ask", json=body)
                    assert "queue is full" in assert_one_line_error(busy, 503)
                    assert int(busy.headers["retry-after"]) >= 1
                deepera = {"query": Q, "reranker": "deepera", "depth": 3}
                assert_one_line_error(c.post("/v1/rerank", json=deepera), 503)
                # work without the LLM is not queued behind it
                found = c.post("/v1/search", json={"query": "curcumin", "k": 1})
                assert found.status_code == 200 and found.json()["items"][0]["doc_id"] == "c1"
                bm25 = {"query": Q, "reranker": "bm25", "depth": 3}
                assert c.post("/v1/rerank", json=bm25).status_code == 200
            finally:
                block.set()
            assert first.result(10).json()["text"] == ANSWER
        assert c.post("/v1/ask", json={"question": Q}).status_code == 200  # free again


async def post(app: Any, body: dict, gone: anyio.Event, messages: list[dict]) -> None:
    """POST /v1/ask straight into the ASGI app; the client disconnects when ``gone`` is set."""
    sent = False

    async def receive() -> dict:
        nonlocal sent
        if not sent:
            sent = True
            return {"type": "http.request", "body": json.dumps(body).encode(), "more_body": False}
        await gone.wait()
        return {"type": "http.disconnect"}

    async def send(message: dict) -> None:
        messages.append(message)

    scope = {
        "type": "http",
        "asgi": {"version": "3.0", "spec_version": "2.3"},  # as uvicorn says
        "http_version": "1.1",
        "method": "POST",
        "scheme": "http",
        "path": "/v1/ask",
        "raw_path": b"/v1/ask",
        "query_string": b"",
        "root_path": "",
        "headers": [(b"content-type", b"application/json"), (b"host", b"test")],
        "client": ("127.0.0.1", 50000),
        "server": ("test", 80),
    }
    await app(scope, receive, send)


async def until(condition: Callable[[], bool]) -> None:
    with anyio.fail_after(5):
        while not condition():
            await anyio.sleep(0.005)


def finished(message: dict) -> bool:
    return message["type"] == "http.response.body" and not message.get("more_body", False)


def asked(llm, question: str) -> bool:
    return any(question in call.prompt for call in llm.calls)


def test_a_waiting_request_whose_client_left_never_runs(make_app):
    block, entered = threading.Event(), threading.Event()
    llm = scripted(block, entered)
    app = make_app(llm=llm, queue_size=1)
    gate = app.state.gate
    first: list[dict] = []

    async def main() -> None:
        stays, leaves = anyio.Event(), anyio.Event()
        async with anyio.create_task_group() as tg:
            tg.start_soon(post, app, {"question": Q}, stays, first)
            await until(entered.is_set)
            tg.start_soon(post, app, {"question": OTHER_Q}, leaves, [])
            await until(lambda: gate.waiting == 1)
            leaves.set()
            await until(lambda: gate.waiting == 0)
            block.set()
            await until(lambda: any(finished(m) for m in first))
            stays.set()

    anyio.run(main)
    assert first[0]["status"] == 200 and asked(llm, Q)
    assert not asked(llm, OTHER_Q) and gate.running == 0


def test_a_streaming_client_that_leaves_stops_the_pipeline_at_the_next_stage(make_app):
    block, entered = threading.Event(), threading.Event()
    llm = scripted(block, entered)
    app = make_app(llm=llm)
    messages: list[dict] = []

    async def main() -> None:
        gone = anyio.Event()
        async with anyio.create_task_group() as tg:
            tg.start_soon(post, app, {"question": Q, "stream": True}, gone, messages)
            await until(entered.is_set)  # DeepEra's first LLM call, inside the rerank stage
            gone.set()
            await anyio.sleep(0.05)
            block.set()  # the rerank stage finishes; the next stage must not start

    anyio.run(main)
    body = b"".join(m.get("body", b"") for m in messages).decode()
    assert body.startswith("event: retrieved\n") and "event: reranked" not in body
    assert asked(llm, "Research question")  # reranking had started
    assert not asked(llm, "Answer with exactly one word")  # generation never did
    assert app.state.gate.running == 0
