"""The MCP server in process: a real client session of the SDK (in-memory, both the modern
direct path and the JSON-RPC handshake path) on the tiny BM25 corpus with the scripted LLM."""

from __future__ import annotations

import json
import threading
from collections.abc import Awaitable, Callable
from typing import Any

import anyio
import pytest
from mcp import Client
from serve_helpers import ANSWER, Q, scripted
from typer.testing import CliRunner

from fakes import ScriptedLLM
from sciera.cli import _register, app
from sciera.errors import ScieraError
from sciera.serve.mcp_server import ScieraMCP
from sciera.serve.routes import ASK_EVENTS
from sciera.serve.schemas import MAX_DEPTH, MAX_K, MAX_QUERY_CHARS

_register()
runner = CliRunner()


@pytest.fixture
def make_mcp(corpus, settings) -> Callable[..., ScieraMCP]:
    """``make_mcp(llm=..., **ScieraMCP_kwargs)``: the server on the tiny corpus."""

    def build(llm: ScriptedLLM | None = None, **kwargs: Any) -> ScieraMCP:
        llm = llm or scripted()
        kwargs.setdefault("llm_factory", lambda s: llm)
        return ScieraMCP({"tiny": corpus}, settings, **kwargs)

    return build


def session(server: ScieraMCP, work: Callable[[Client], Awaitable[Any]], mode: str = "auto"):
    """``work(client)`` in a client session with ``server``; its result."""

    async def main() -> Any:
        with anyio.fail_after(30):
            async with Client(server.server, mode=mode) as client:
                return await work(client)

    return anyio.run(main)


def call(server: ScieraMCP, tool: str, arguments: dict[str, Any]):
    return session(server, lambda c: c.call_tool(tool, arguments))


def error_text(result) -> str:
    """The text of a tool error: one line, no traceback."""
    assert result.is_error, result
    (content,) = result.content
    assert content.type == "text" and content.text and "\n" not in content.text
    assert "Traceback" not in content.text
    return content.text


@pytest.mark.parametrize("mode", ["auto", "legacy"])
def test_tools_are_listed_with_the_http_api_limits(make_mcp, mode):
    listed = session(make_mcp(), lambda c: c.list_tools(), mode)
    tools = {t.name: t for t in listed.tools}
    assert list(tools) == ["search", "rerank", "ask", "verify"]
    search = tools["search"].input_schema
    assert search["required"] == ["query"] and search["additionalProperties"] is False
    assert search["properties"]["query"]["maxLength"] == MAX_QUERY_CHARS
    assert search["properties"]["query"]["minLength"] == 1
    assert search["properties"]["k"]["maximum"] == MAX_K
    rerank = tools["rerank"].input_schema["properties"]
    assert (
        rerank["depth"]["maximum"] == MAX_DEPTH and "deepera" in rerank["reranker"]["description"]
    )
    ask = tools["ask"].input_schema
    assert ask["required"] == ["question"] and "stream" not in ask["properties"]
    assert set(tools["ask"].output_schema["properties"]) >= {"text", "citations", "evidence"}
    for tool in tools.values():
        assert "tiny (default)" in tool.description
        assert tool.annotations.read_only_hint and tool.output_schema is not None


@pytest.mark.parametrize("mode", ["auto", "legacy"])
def test_search_ranks_the_matching_passage_first(make_mcp, mode):
    args = {"query": "albendazole filariasis", "k": 2, "corpus": "tiny"}
    result = session(make_mcp(), lambda c: c.call_tool("search", args), mode)
    assert not result.is_error, result
    data = result.structured_content
    assert json.loads(result.content[0].text) == data
    assert data["corpus"] == "tiny" and data["retriever"] == "bm25"
    top, second = data["items"]
    assert (top["passage_id"], top["doc_id"], top["rank"]) == ("a1#0", "a1", 1)
    assert top["title"] == "Albendazole and filariasis" and top["score"] > second["score"]


@pytest.mark.parametrize(
    ("tool", "arguments", "expected"),
    [
        ("search", {"query": ""}, "query: String should have at least 1 character"),
        ("search", {"query": " \n\t "}, "query: must not be empty"),
        ("search", {}, "query: Field required"),
        (
            "search",
            {"query": "x" * (MAX_QUERY_CHARS + 1)},
            f"query: String should have at most {MAX_QUERY_CHARS} characters",
        ),
        (
            "search",
            {"query": "x", "k": MAX_K + 1},
            f"k: Input should be less than or equal to {MAX_K}",
        ),
        ("search", {"query": "x", "kk": 3}, "kk: Extra inputs are not permitted"),
        ("search", {"query": "x", "corpus": "nope"}, "unknown corpus 'nope'; served: tiny"),
        ("rerank", {"query": "x", "reranker": "magic"}, "reranker: unknown reranker 'magic'"),
        ("rerank", {"query": "x", "corpus": "nope"}, "unknown corpus 'nope'; served: tiny"),
        ("ask", {"question": "   "}, "question: must not be empty"),
        ("ask", {"question": Q, "stream": True}, "stream: not an argument of the ask tool"),
        ("ask", {"question": Q, "corpus": "nope"}, "unknown corpus 'nope'; served: tiny"),
        ("grep", {"query": "x"}, "unknown tool 'grep'; tools: search, rerank, ask, verify"),
    ],
)
def test_a_bad_call_is_a_one_line_tool_error_and_the_server_serves_on(
    make_mcp, tool, arguments, expected
):
    llm = scripted()

    async def work(client: Client):
        bad = await client.call_tool(tool, arguments)
        good = await client.call_tool("search", {"query": "curcumin", "k": 1})
        return bad, good

    bad, good = session(make_mcp(llm=llm), work)
    assert error_text(bad).startswith(expected)
    assert [it["doc_id"] for it in good.structured_content["items"]] == ["c1"]
    assert llm.calls == []  # refused before any model ran


def test_a_retriever_without_its_index_is_a_tool_error_naming_the_problem(make_mcp):
    result = call(make_mcp(), "search", {"query": "albendazole", "retriever": "dense"})
    assert "index" in error_text(result)


def test_ask_returns_the_answer_json_and_reports_each_stage(make_mcp):
    progress: list[tuple[float, float | None, str | None]] = []

    async def record(done: float, total: float | None, message: str | None) -> None:
        progress.append((done, total, message))

    result = session(
        make_mcp(), lambda c: c.call_tool("ask", {"question": Q}, progress_callback=record)
    )
    assert not result.is_error, result
    data = json.loads(result.content[0].text)
    assert data == result.structured_content
    assert data["text"] == ANSWER and data["question_type"] == "yesno"
    assert [c["passage_id"] for c in data["citations"]] == ["a1#0"]
    assert [e["summary"] for e in data["evidence"]] == ["Albendazole treats lymphatic filariasis."]
    assert progress == [(i + 1, len(ASK_EVENTS), name) for i, name in enumerate(ASK_EVENTS)]


def test_rerank_with_deepera_lists_kept_and_filtered(make_mcp):
    args = {"query": Q, "depth": 3, "k": 5, "reranker": "deepera"}
    data = call(make_mcp(), "rerank", args).structured_content
    assert [it["passage_id"] for it in data["items"]] == ["a1#0"]
    assert {f["passage_id"] for f in data["filtered"]} == {"c1#0", "m1#0"}
    assert data["trace"]["intent"]["intent"] == "factual"


def test_rerank_with_bm25_calls_no_llm(make_mcp):
    llm = scripted()
    args = {"query": "filariasis vectors", "depth": 3, "k": 2, "reranker": "bm25"}
    data = call(make_mcp(llm=llm), "rerank", args).structured_content
    assert [it["rank"] for it in data["items"]] == [1, 2] and data["trace"] is None
    assert data["items"][0]["passage_id"] == "m1#0"
    assert llm.calls == []


def test_a_library_error_is_its_message(make_mcp):
    down = ScriptedLLM().on("Research question", raises=ScieraError("the LLM server is down"))
    assert error_text(call(make_mcp(llm=down), "ask", {"question": Q})) == "the LLM server is down"


def test_a_crash_is_an_internal_error_without_its_details(make_mcp, caplog):
    def broken(settings):
        raise RuntimeError("secret detail")

    result = call(make_mcp(llm_factory=broken), "ask", {"question": Q})
    assert error_text(result) == "internal error; the server log has the details"
    assert "secret detail" in caplog.text  # in the server log only


def test_a_full_llm_queue_refuses_at_once(make_mcp):
    block, entered = threading.Event(), threading.Event()
    server = make_mcp(llm=scripted(block, entered), queue_size=0)

    async def work(client: Client):
        results: dict[str, Any] = {}

        async def first() -> None:
            results["first"] = await client.call_tool("ask", {"question": Q})

        async with anyio.create_task_group() as tg:
            tg.start_soon(first)
            while not entered.is_set():
                await anyio.sleep(0.01)
            results["second"] = await client.call_tool("ask", {"question": Q})
            block.set()
        return results

    try:
        results = session(server, work)
    finally:
        block.set()
    assert "the LLM queue is full" in error_text(results["second"])
    assert results["first"].structured_content["text"] == ANSWER


def test_the_mcp_command_serves_the_named_corpora_on_stdio(corpus, monkeypatch):
    served: list[ScieraMCP] = []
    monkeypatch.setattr(anyio, "run", lambda fn: served.append(fn.__self__))
    result = runner.invoke(app, ["mcp", "--corpus", f"tiny={corpus}", "--queue-size", "0"])
    assert result.exit_code == 0, result.output
    (server,) = served
    assert list(server.resources.corpora) == ["tiny"] and server.gate.max_waiting == 0
    assert "serving tiny over stdio" in result.stderr and result.stdout == ""


def test_the_mcp_command_refuses_a_folder_without_a_store(tmp_path, monkeypatch):
    monkeypatch.setattr(anyio, "run", lambda fn: pytest.fail("must not serve"))
    result = runner.invoke(app, ["mcp", "--corpus", str(tmp_path)])
    assert isinstance(result.exception, ScieraError)
    assert "no passage store" in str(result.exception)


@pytest.mark.parametrize("mode", ["auto", "legacy"])
def test_a_cancelled_ask_stops_at_its_next_stage_and_frees_the_llm(make_mcp, mode):
    block, entered = threading.Event(), threading.Event()
    llm = scripted(block, entered)
    server = make_mcp(llm=llm, queue_size=1)

    def answers() -> int:
        return sum("Answer with exactly one word" in c.prompt for c in llm.calls)

    async def work(client: Client):
        async with anyio.create_task_group() as tg:
            with anyio.CancelScope() as first:

                async def cancel_inside_the_llm() -> None:
                    while not entered.is_set():
                        await anyio.sleep(0.01)
                    first.cancel()
                    await anyio.sleep(0.1)
                    # in process the cancelled call returns when its thread ends
                    block.set()

                tg.start_soon(cancel_inside_the_llm)
                await client.call_tool("ask", {"question": Q})
            assert answers() == 0  # stopped before the answer stage
            return await client.call_tool("ask", {"question": Q})

    try:
        second = session(server, work, mode)
    finally:
        block.set()
    assert second.structured_content["text"] == ANSWER
    assert answers() == 1
