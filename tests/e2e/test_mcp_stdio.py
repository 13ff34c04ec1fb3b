"""`sciera mcp` end to end: a real MCP client session of the SDK over stdio, spawning
`sciera mcp --corpus DIR` as a subprocess on a real SciFact slice (the first 300 abstracts,
BM25 first stage); the verify tool reads the shipped cross-encoder and verifier, and the
1.5B's label probabilities (the default combined verdict; the LLM writes no prose)."""

from __future__ import annotations

import json
import os
from pathlib import Path
from typing import Any

import anyio
import pytest
from mcp import Client, StdioServerParameters
from mcp.client.stdio import stdio_client
from train_cli import sciera_exe

from sciera.serve.schemas import MAX_QUERY_CHARS

pytestmark = [pytest.mark.e2e, pytest.mark.integration]

CLAIM = "TNFAIP3 is a tumor suppressor in glioblastoma."  # SciFact test claim 1137
GOLD = "33370"


@pytest.fixture(scope="module")
def corpus(scifact_slice: Path) -> Path:
    return scifact_slice


def test_a_client_session_over_stdio_searches_reranks_and_gets_one_line_errors(
    corpus: Path, fresh_home, tmp_path: Path
) -> None:
    params = StdioServerParameters(
        command=sciera_exe(),
        args=["mcp", "--corpus", f"scifact={corpus}"],
        env={
            **os.environ,
            "SCIERA_HOME": str(fresh_home(tmp_path / "home")),
            "HF_HUB_OFFLINE": "1",
            "SCIERA_RETRIEVE__RETRIEVER": "bm25",
        },
    )
    log_path = tmp_path / "mcp.log"

    async def main() -> dict[str, Any]:
        with log_path.open("w") as errlog, anyio.fail_after(300):
            async with Client(stdio_client(params, errlog=errlog)) as client:
                return {
                    "info": client.server_info,
                    "tools": (await client.list_tools()).tools,
                    "search": await client.call_tool("search", {"query": CLAIM, "k": 5}),
                    "rerank": await client.call_tool(
                        "rerank", {"query": CLAIM, "reranker": "bm25", "depth": 20, "k": 3}
                    ),
                    "too_long": await client.call_tool(
                        "search", {"query": "x" * (MAX_QUERY_CHARS + 1)}
                    ),
                    "unknown": await client.call_tool("search", {"query": CLAIM, "corpus": "nf"}),
                    "after": await client.call_tool("search", {"query": CLAIM, "k": 1}),
                    "verify": await client.call_tool("verify", {"claim": CLAIM}),
                }

    try:
        got = anyio.run(main)
    finally:
        print(log_path.read_text() if log_path.exists() else "(no server log)")
    log = log_path.read_text()
    assert "serving scifact over stdio (tools: search, rerank, ask, verify)" in log
    assert "Traceback" not in log

    assert got["info"].name == "sciera"
    tools = {t.name: t for t in got["tools"]}
    assert list(tools) == ["search", "rerank", "ask", "verify"]
    query = tools["search"].input_schema["properties"]["query"]
    assert query["maxLength"] == MAX_QUERY_CHARS and query["minLength"] == 1

    search = got["search"]
    assert not search.is_error, search.content
    data = json.loads(search.content[0].text)
    assert data == search.structured_content
    assert data["corpus"] == "scifact" and data["retriever"] == "bm25"
    assert data["items"][0]["doc_id"] == GOLD and len(data["items"]) == 5

    rerank = got["rerank"]
    assert not rerank.is_error, rerank.content
    reranked = rerank.structured_content
    assert reranked["reranker"] == "bm25" and reranked["first_stage"] == "bm25"
    assert reranked["depth"] == 20 and len(reranked["items"]) == 3
    assert reranked["items"][0]["doc_id"] == GOLD

    for name, expected in [
        ("too_long", f"query: String should have at most {MAX_QUERY_CHARS} characters"),
        ("unknown", "unknown corpus 'nf'; served: scifact"),
    ]:
        result = got[name]
        assert result.is_error and len(result.content) == 1, name
        assert result.content[0].text == expected
    assert got["after"].structured_content["items"][0]["doc_id"] == GOLD  # still serving

    verify = got["verify"]
    assert not verify.is_error, verify.content
    v = verify.structured_content
    assert v["label"] in {"SUPPORT", "CONTRADICT", "NOT ENOUGH INFO", "CONFLICTING"}
    assert GOLD in {a["doc_id"] for a in v["abstracts"]}  # the top abstracts were read
    assert all(r["text"] for a in v["abstracts"] for r in a["rationales"])
