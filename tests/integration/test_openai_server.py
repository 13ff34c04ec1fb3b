"""OpenAICompatLLM and CachedLLM against a real llama.cpp server on loopback.

Starts ``llama_cpp.server`` (under sciera's AMX guard) with the registered 0.5B GGUF (assembled and
verified by ``ensure_model``) on a free port, once for the module. The 0.5B model
is near chance as a judge, so the assertions check the protocol (shapes, sums,
modes, cache, timeouts) and only instruction-following that even it gets right.
"""

from __future__ import annotations

import socket
import subprocess
import sys
import time
from collections.abc import Iterator
from pathlib import Path

import httpx
import pytest

from sciera.errors import ScieraError
from sciera.llm.base import Message
from sciera.llm.cache import CachedLLM
from sciera.llm.openai_compat import OpenAICompatLLM
from sciera.llm.prompting import delimit_passages, load_prompt
from workers import TEST_THREADS

pytestmark = pytest.mark.integration

MODEL = "qwen2.5-coder-0.5b-instruct-q4_k_m"
SCHEMA = {
    "type": "object",
    "properties": {
        "answer": {"type": "string", "enum": ["yes", "no"]},
        "confidence": {"type": "number", "minimum": 0, "maximum": 1},
    },
    "required": ["answer", "confidence"],
}


# llama_cpp.server run under the same AMX guard as LlamaCppLLM (sciera.llm.llamacpp_buffers):
# with its defaults it crashes at the first decode on CPUs with AMX.
SERVE = """
import runpy, llama_cpp
from sciera.llm.llamacpp_buffers import model_params_override, system_info, use_extra_buffers
extra = use_extra_buffers("auto", system_info(llama_cpp))
with model_params_override(llama_cpp, use_extra_bufts=extra):
    runpy.run_module("llama_cpp.server", run_name="__main__", alter_sys=True)
"""


def _free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def _wait_ready(url: str, proc: subprocess.Popen, log: Path, timeout: float) -> None:
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        if proc.poll() is not None:
            pytest.fail(f"llama_cpp.server exited ({proc.returncode}):\n{log.read_text()[-3000:]}")
        try:
            if httpx.get(f"{url}/models", timeout=2).status_code == 200:
                return
        except httpx.TransportError:
            pass
        time.sleep(0.5)
    pytest.fail(f"llama_cpp.server not ready after {timeout} s:\n{log.read_text()[-3000:]}")


@pytest.fixture(scope="module")
def server_url(tmp_path_factory: pytest.TempPathFactory) -> Iterator[str]:
    pytest.importorskip("llama_cpp.server", reason="needs the llm extra")
    from sciera.llm.weights import ensure_model
    from sciera.settings import load_settings

    gguf = ensure_model(MODEL, load_settings().home)
    port = _free_port()
    log = tmp_path_factory.mktemp("llama-server") / "server.log"
    cmd = [
        sys.executable, "-c", SERVE, "--model", str(gguf), "--model_alias", MODEL,
        "--host", "127.0.0.1", "--port", str(port), "--n_ctx", "2048",
        "--n_threads", str(TEST_THREADS),
    ]  # fmt: skip
    with log.open("w") as out:
        proc = subprocess.Popen(cmd, stdout=out, stderr=subprocess.STDOUT)
    url = f"http://127.0.0.1:{port}/v1"
    try:
        _wait_ready(url, proc, log, timeout=180)
        yield url
    finally:
        proc.terminate()
        try:
            proc.wait(timeout=5)  # uvicorn waits for abandoned generations
        except subprocess.TimeoutExpired:
            proc.kill()
            proc.wait()


@pytest.fixture(scope="module")
def llm(server_url: str) -> Iterator[OpenAICompatLLM]:
    with OpenAICompatLLM(server_url, MODEL, timeout=300, retries=1) as client:
        yield client


def test_complete(llm: OpenAICompatLLM) -> None:
    reply = llm.complete([Message("user", "Reply with the single word: hello")], max_tokens=8)
    assert "hello" in reply.text.lower()
    assert reply.prompt_tokens > 5 and 1 <= reply.completion_tokens <= 8
    assert reply.finish_reason in {"stop", "length"} and reply.seconds > 0


def test_complete_respects_max_tokens_and_stop(llm: OpenAICompatLLM) -> None:
    msgs = [Message("user", "Count from 1 to 20, separated by commas.")]
    reply = llm.complete(msgs, max_tokens=4)
    assert reply.completion_tokens == 4 and reply.finish_reason == "length"
    stopped = llm.complete(msgs, max_tokens=40, stop=["5"])
    assert "5" not in stopped.text and "1" in stopped.text


def test_complete_json_with_schema(llm: OpenAICompatLLM) -> None:
    msgs = [
        Message("system", "You answer questions as JSON."),
        Message("user", "Is the sky blue on a clear day?"),
    ]
    result = llm.complete_json(msgs, SCHEMA, max_tokens=40)
    assert result.ok, result.failure
    assert result.value is not None and result.value["answer"] in {"yes", "no"}
    assert 0 <= result.value["confidence"] <= 1
    # llama-cpp-python's server rejects type json_schema and constrains json_object + schema
    assert llm.json_mode == "json_object+schema"


def test_choice_logprobs_sum_to_one(llm: OpenAICompatLLM) -> None:
    probs = llm.choice_logprobs([Message("user", "Reply with the single word yes.")], ["yes", "no"])
    assert set(probs.probs) == {"yes", "no"}
    assert sum(probs.probs.values()) == pytest.approx(1.0, abs=1e-9)
    assert 0 < probs.raw_mass <= 1.0 + 1e-9  # read from real logprobs, not the fallback
    assert probs.probs["yes"] > 0.5
    assert probs.prompt_tokens > 5


def test_choice_logprobs_with_a_delimited_prompt(llm: OpenAICompatLLM) -> None:
    messages = load_prompt("generic_choice").render(
        question="Does the passage say that aspirin reduces fever?",
        passages=delimit_passages(["Aspirin reduces fever in adults."]),
        options="yes, no",
    )
    probs = llm.choice_logprobs(messages, ["yes", "no"])
    assert sum(probs.probs.values()) == pytest.approx(1.0, abs=1e-9)
    assert probs.raw_mass > 0.5  # the model answers with one of the options


def test_cache_hit_on_repeat(llm: OpenAICompatLLM, tmp_path: Path) -> None:
    msgs = [Message("user", "Name one primary color. One word.")]
    with CachedLLM(llm, tmp_path / "llm-cache.sqlite") as cached:
        first = cached.complete(msgs, max_tokens=5)
        start = time.perf_counter()
        second = cached.complete(msgs, max_tokens=5)
        hit_seconds = time.perf_counter() - start
        probs = [cached.choice_logprobs(msgs, ["red", "blue"]) for _ in range(2)]
    assert (first.cached, second.cached) == (False, True)
    assert second.text == first.text and hit_seconds < 0.5
    assert not probs[0].cached and probs[1].cached and probs[1].probs == probs[0].probs
    usage = cached.usage()
    assert (usage.calls, usage.cache_hits, usage.cache_misses) == (4, 2, 2)
    with CachedLLM(llm, tmp_path / "llm-cache.sqlite") as again:  # persisted
        assert again.complete(msgs, max_tokens=5).cached


def test_timeout_is_a_clear_error(server_url: str) -> None:
    # last in the module: the server keeps generating the abandoned requests
    msgs = [Message("user", "Write a long essay about the history of medicine.")]
    with OpenAICompatLLM(server_url, MODEL, timeout=0.3, retries=1, backoff=0.05) as hasty:
        start = time.perf_counter()
        with pytest.raises(ScieraError, match=r"127\.0\.0\.1.*no reply within the 0\.3 s timeout"):
            hasty.complete(msgs, max_tokens=48)
        assert time.perf_counter() - start < 5
