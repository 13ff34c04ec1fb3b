"""OpenAICompatLLM against a tiny real HTTP server on 127.0.0.1 (scripted replies).

The server is real (http.server in a thread); what it answers is scripted per
test, so retries, fallbacks and logprob mapping are checked with hand-computed
values. The integration tier runs the same client against llama.cpp's server.
"""

from __future__ import annotations

import contextlib
import json
import logging
import math
import socket
import threading
import time
from collections.abc import Callable, Iterator
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import Any

import pytest

from sciera.errors import ScieraError
from sciera.llm.base import LLM, Message
from sciera.llm.openai_compat import HTTPStatusError, OpenAICompatLLM

Reply = tuple[int, dict[str, str], Any]  # status, headers, JSON body (or str)
MSGS = [Message("system", "Be brief."), Message("user", "Is water wet?")]
SCHEMA = {
    "type": "object",
    "properties": {"answer": {"enum": ["yes", "no"]}},
    "required": ["answer"],
}


def chat(content: str, *, logprobs: Any = None, prompt_tokens: int = 11) -> dict[str, Any]:
    choice = {
        "index": 0,
        "message": {"role": "assistant", "content": content},
        "finish_reason": "stop",
        "logprobs": logprobs,
    }
    usage = {"prompt_tokens": prompt_tokens, "completion_tokens": 2, "total_tokens": 13}
    return {"id": "x", "object": "chat.completion", "choices": [choice], "usage": usage}


class Server:
    """A threaded HTTP server that records requests and answers with ``responder``."""

    def __init__(self) -> None:
        self.requests: list[dict[str, Any]] = []
        self.headers: list[dict[str, str]] = []
        self.responder: Callable[[dict[str, Any], int], Reply] = lambda req, n: (
            200,
            {},
            chat("ok"),
        )
        self.lock = threading.Lock()
        server = self

        class Handler(BaseHTTPRequestHandler):
            def do_POST(self) -> None:
                body = json.loads(self.rfile.read(int(self.headers["Content-Length"])))
                with server.lock:
                    server.requests.append(body)
                    server.headers.append(dict(self.headers))
                    n = len(server.requests)
                status, headers, payload = server.responder(body, n)
                data = payload if isinstance(payload, str) else json.dumps(payload)
                self.send_response(status)
                for key, value in headers.items():
                    self.send_header(key, value)
                self.send_header("Content-Type", "application/json")
                self.send_header("Content-Length", str(len(data.encode())))
                self.end_headers()
                with contextlib.suppress(BrokenPipeError, ConnectionResetError):
                    self.wfile.write(data.encode())  # the client may have given up

            def log_message(self, *args: object) -> None:
                pass

        self.httpd = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
        self.httpd.daemon_threads = True
        self.url = f"http://127.0.0.1:{self.httpd.server_address[1]}/v1"
        self.thread = threading.Thread(
            target=self.httpd.serve_forever, kwargs={"poll_interval": 0.02}, daemon=True
        )
        self.thread.start()

    def close(self) -> None:
        self.httpd.shutdown()
        self.httpd.server_close()


@pytest.fixture
def server() -> Iterator[Server]:
    s = Server()
    yield s
    s.close()


def make(server: Server, **kwargs: Any) -> OpenAICompatLLM:
    kwargs.setdefault("backoff", 0.01)
    return OpenAICompatLLM(server.url, "test-model", **kwargs)


def test_protocol_and_model_id(server: Server) -> None:
    llm = make(server)
    assert isinstance(llm, LLM)
    assert llm.model_id == f"openai:{server.url}:test-model"
    assert OpenAICompatLLM(server.url + "/", "m").model_id == f"openai:{server.url}:m"


def test_complete_sends_chat_request_and_reads_usage(server: Server) -> None:
    llm = make(server, seed=7)
    reply = llm.complete(MSGS, max_tokens=5, temperature=0.0, stop=["\n"])
    assert (reply.text, reply.prompt_tokens, reply.completion_tokens) == ("ok", 11, 2)
    assert reply.finish_reason == "stop" and reply.seconds > 0
    assert server.requests == [
        {
            "model": "test-model",
            "messages": [
                {"role": "system", "content": "Be brief."},
                {"role": "user", "content": "Is water wet?"},
            ],
            "max_tokens": 5,
            "temperature": 0.0,
            "stop": ["\n"],
            "seed": 7,
        }
    ]


def test_retries_429_then_succeeds(server: Server) -> None:
    server.responder = lambda req, n: (
        (429, {"Retry-After": "0"}, {"error": "slow down"}) if n == 1 else (200, {}, chat("fine"))
    )
    assert make(server).complete(MSGS).text == "fine"
    assert len(server.requests) == 2


def test_retry_after_header_is_honored(server: Server) -> None:
    server.responder = lambda req, n: (
        (503, {"Retry-After": "1"}, "busy") if n == 1 else (200, {}, chat("fine"))
    )
    start = time.perf_counter()
    assert make(server, backoff=0.001).complete(MSGS).text == "fine"
    assert time.perf_counter() - start >= 0.95


def test_gives_up_after_retries_with_the_url(server: Server) -> None:
    server.responder = lambda req, n: (500, {}, {"error": "boom"})
    with pytest.raises(
        ScieraError, match=r"/v1/chat/completions: HTTP 500.*gave up after 3 attempts"
    ):
        make(server, retries=2).complete(MSGS)
    assert len(server.requests) == 3


def test_client_errors_are_not_retried_and_hide_the_key(server: Server) -> None:
    server.responder = lambda req, n: (401, {}, {"error": "bad key"})
    with pytest.raises(HTTPStatusError) as info:
        make(server, api_key="sk-secret").complete(MSGS)
    assert info.value.status == 401 and "sk-secret" not in str(info.value)
    assert len(server.requests) == 1
    assert server.headers[0]["Authorization"] == "Bearer sk-secret"


def test_api_key_from_environment(server: Server, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.delenv("SCIERA_LLM__API_KEY", raising=False)
    monkeypatch.setenv("OPENAI_API_KEY", "sk-openai")
    make(server).complete(MSGS)
    monkeypatch.setenv("SCIERA_LLM__API_KEY", "sk-sciera")
    make(server).complete(MSGS)
    assert [h["Authorization"] for h in server.headers] == ["Bearer sk-openai", "Bearer sk-sciera"]


def test_timeout_is_a_clear_error_without_hanging(server: Server) -> None:
    release = threading.Event()

    def stuck(req: dict, n: int) -> Reply:  # replies only when released (10 s at most)
        release.wait(10)
        return 200, {}, chat("late")

    server.responder = stuck
    start = time.perf_counter()
    try:
        with pytest.raises(ScieraError, match=r"127\.0\.0\.1.*no reply within the 0\.2 s timeout"):
            make(server, timeout=0.2, retries=1).complete(MSGS)
        # 2 attempts of 0.2 s; waiting for a reply would take 10 s per attempt. The bound
        # is loose on purpose: a loaded 2-core CI machine must not fail it.
        assert time.perf_counter() - start < 5.0
    finally:
        release.set()
    assert len(server.requests) == 2


def test_connection_refused_is_a_clear_error() -> None:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        port = s.getsockname()[1]
    llm = OpenAICompatLLM(f"http://127.0.0.1:{port}/v1", "m", retries=1, backoff=0.01)
    with pytest.raises(ScieraError, match=rf"127\.0\.0\.1:{port}/v1/chat/completions: connection"):
        llm.complete(MSGS)


def test_missing_base_url_is_an_error() -> None:
    with pytest.raises(ScieraError, match="base_url"):
        OpenAICompatLLM("", "m")


def llama_cpp_like(req: dict, n: int) -> Reply:
    """Rejects json_schema the way llama-cpp-python's server does (HTTP 500 naming the field)."""
    fmt = req.get("response_format")
    if fmt and fmt["type"] == "json_schema":
        return 500, {}, {"error": {"message": "('body', 'response_format', 'type') literal_error"}}
    assert fmt == {"type": "json_object", "schema": SCHEMA}
    return 200, {}, chat('{"answer": "yes"}')


def test_json_mode_falls_back_once_and_is_remembered(server: Server) -> None:
    server.responder = llama_cpp_like
    llm = make(server)
    first = llm.complete_json(MSGS, SCHEMA, max_tokens=20)
    assert first.ok and first.value == {"answer": "yes"}
    assert llm.json_mode == "json_object+schema"
    assert len(server.requests) == 2  # rejected once, not retried
    second = llm.complete_json(MSGS, SCHEMA, max_tokens=20)
    assert second.value == {"answer": "yes"} and len(server.requests) == 3
    sent = server.requests[-1]
    assert sent["temperature"] == 0.0 and sent["max_tokens"] == 20
    assert sent["messages"][-1]["content"].startswith("Is water wet?\n\nReply with a single JSON")
    assert json.dumps(SCHEMA) in sent["messages"][-1]["content"]


def test_json_prompt_mode_parses_messy_replies(server: Server) -> None:
    def no_formats(req: dict, n: int) -> Reply:
        if "response_format" in req:
            return 422, {}, {"detail": "unsupported"}
        return 200, {}, chat("<think>hmm</think>\n```json\n{'answer': 'No',}\n```")

    server.responder = no_formats
    llm = make(server)
    result = llm.complete_json(MSGS, SCHEMA)
    assert result.ok and result.value == {"answer": "no"}
    assert llm.json_mode == "prompt" and len(server.requests) == 4


def test_json_reply_that_does_not_parse_is_a_failure(server: Server) -> None:
    server.responder = lambda req, n: (200, {}, chat('{"answer": "perhaps"}'))
    result = make(server).complete_json(MSGS, SCHEMA)
    assert not result.ok and result.value is None
    assert result.failure is not None and "not one of" in result.failure.error


def top(tokens: dict[str, float]) -> dict[str, Any]:
    first = next(iter(tokens))
    tops = [{"token": t, "logprob": math.log(p), "bytes": None} for t, p in tokens.items()]
    return {"content": [{"token": first, "logprob": math.log(tokens[first]), "top_logprobs": tops}]}


def test_choice_logprobs_maps_and_renormalizes(server: Server) -> None:
    dist = {"yes": 0.5, " Yes": 0.2, "no": 0.15, "\nNo": 0.05, "maybe": 0.1}
    server.responder = lambda req, n: (200, {}, chat("yes", logprobs=top(dist)))
    probs = make(server).choice_logprobs(MSGS, ["yes", "no"])
    # yes: 0.5 + 0.2 (" Yes", case folded) ; no: 0.15 + 0.05 ; mass 0.9
    assert probs.probs == pytest.approx({"yes": 0.7 / 0.9, "no": 0.2 / 0.9})
    assert probs.raw_mass == pytest.approx(0.9)
    assert probs.prompt_tokens == 11
    sent = server.requests[0]
    assert (sent["max_tokens"], sent["logprobs"], sent["top_logprobs"]) == (1, True, 20)


def test_choice_logprobs_case_sensitive_when_choices_differ_by_case(server: Server) -> None:
    dist = {"A": 0.6, "a": 0.3, "B": 0.1}
    server.responder = lambda req, n: (200, {}, chat("A", logprobs=top(dist)))
    probs = make(server).choice_logprobs(MSGS, ["A", "a"])
    assert probs.probs == pytest.approx({"A": 2 / 3, "a": 1 / 3})


def test_choice_logprobs_legacy_format(server: Server) -> None:
    legacy = {
        "tokens": ["no"],
        "token_logprobs": [math.log(0.6)],
        "top_logprobs": [{"no": math.log(0.6), "yes": math.log(0.2)}],
    }
    server.responder = lambda req, n: (200, {}, chat("no", logprobs=legacy))
    probs = make(server).choice_logprobs(MSGS, ["yes", "no"])
    assert probs.probs == pytest.approx({"yes": 0.25, "no": 0.75})


def test_no_logprobs_falls_back_to_one_hot(
    server: Server, caplog: pytest.LogCaptureFixture
) -> None:
    server.responder = lambda req, n: (200, {}, chat("No."))
    llm = make(server)
    with caplog.at_level(logging.WARNING, logger="sciera.llm.openai_compat"):
        probs = llm.choice_logprobs(MSGS, ["yes", "no"])
    assert probs.probs == {"yes": 0.0, "no": 1.0} and probs.raw_mass == 0.0
    assert "uncalibrated" in caplog.text
    assert len(server.requests) == 2  # logprob request, then the generated answer
    llm.choice_logprobs(MSGS, ["yes", "no"])
    assert len(server.requests) == 3  # remembered: no second logprob request
    assert "logprobs" not in server.requests[-1]


def test_unreadable_fallback_answer_gives_no_mass(server: Server) -> None:
    server.responder = lambda req, n: (200, {}, chat("I am not sure."))
    probs = make(server).choice_logprobs(MSGS, ["yes", "no"])
    assert probs.probs == {"yes": 0.0, "no": 0.0} and probs.raw_mass == 0.0
    assert probs.expected({"yes": 1.0, "no": 0.0}) == 0.0  # never a positive by default


def test_choices_outside_top_tokens_fall_back_to_generation(server: Server) -> None:
    server.responder = lambda req, n: (
        (200, {}, chat("The", logprobs=top({"The": 0.9, "It": 0.1})))
        if n == 1
        else (200, {}, chat("yes"))
    )
    probs = make(server).choice_logprobs(MSGS, ["yes", "no"])
    assert probs.probs == {"yes": 1.0, "no": 0.0} and probs.raw_mass == 0.0


def test_concurrency_limit(server: Server) -> None:
    active, peak = [0], [0]

    def slow(req: dict, n: int) -> Reply:
        with server.lock:
            active[0] += 1
            peak[0] = max(peak[0], active[0])
        time.sleep(0.2)
        with server.lock:
            active[0] -= 1
        return 200, {}, chat("ok")

    server.responder = slow
    llm = make(server, concurrency=2)
    threads = [threading.Thread(target=llm.complete, args=(MSGS,)) for _ in range(6)]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    assert len(server.requests) == 6 and peak[0] == 2
