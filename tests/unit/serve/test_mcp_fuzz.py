"""The MCP server against generated tool calls (Hypothesis), in process, with stand-in models.

Each example is a batch of calls in one client session: tool names (the four, and others),
arguments built from each tool's own input schema with every field either left out, valid,
of a wrong type, out of range, huge (100,000 characters) or odd Unicode, plus unknown fields.
Every call must be a result that validates against the tool's output schema, or a tool error
whose text is one line, with no traceback, no server path and never the catch-all
``internal error``; after the batch a plain search still answers (the server keeps serving).
Reranker and retriever values are limited to the model-free ones (BM25, DeepEra and the
LLM rerankers on the scripted LLM; dense and hybrid retrieval fail for want of a dense
index): the trained cross-encoder and the embedders are tested in the integration tier.
"""

from __future__ import annotations

import json
from typing import Any

import anyio
import pytest
from hypothesis import strategies as st
from mcp import Client
from serve_helpers import Q, fuzz_llm, fuzz_settings

from fuzz_tiers import tiered
from sciera.serve.mcp_server import INTERNAL, TOOLS, ScieraMCP

MODEL_FREE_RERANKERS = ["bm25", "deepera", "llm_graded", "llm_pointwise", "llm_listwise"]
ODD_TEXT = st.sampled_from(
    [
        "albendazole filariasis",
        "\x00",
        "\u202e\u0301\U0001f600 \U00010348",
        "a\nb\r\nc",
        "'; DROP TABLE passages; --",
        "../../etc/passwd",
        "{{question}} {passage}",
        "\ud800",
        "x" * 100_000,
    ]
)
JSON = st.recursive(
    st.none() | st.booleans() | st.integers() | st.floats() | st.text(max_size=10),
    lambda c: st.lists(c, max_size=3) | st.dictionaries(st.text(max_size=5), c, max_size=3),
    max_leaves=6,
)


def from_schema(schema: dict[str, Any], name: str) -> st.SearchStrategy[Any]:
    """Values the schema allows (model-free choices for reranker and retriever)."""
    if name == "reranker":
        return st.none() | st.sampled_from(MODEL_FREE_RERANKERS)
    if name == "retriever":  # dense and hybrid: the tiny corpus has no dense index (an error)
        return st.none() | st.sampled_from(["bm25", "bm25", "dense", "hybrid"])
    if name == "corpus":
        return st.none() | st.just("tiny")
    if "anyOf" in schema:
        return st.one_of([from_schema(s, name) for s in schema["anyOf"]])
    if "enum" in schema:
        return st.sampled_from(schema["enum"])
    kind = schema.get("type")
    if kind == "string":
        return st.text(
            min_size=schema.get("minLength", 0), max_size=min(schema.get("maxLength", 50), 50)
        )
    if kind == "integer":
        low, high = schema.get("minimum", -(2**31)), schema.get("maximum", 2**31)
        return st.integers(low, min(high, low + 20))
    if kind == "boolean":
        return st.booleans()
    if kind == "null":
        return st.none()
    return JSON


def wrong(schema: dict[str, Any]) -> st.SearchStrategy[Any]:
    """Values of another type, out of range, huge or odd."""
    outside = st.sampled_from([0, -1, 10**6, 2**63, -(2**63), 1.5, float("nan"), True])
    return JSON | ODD_TEXT | outside | st.text(min_size=2001, max_size=2100)


def arguments(tool: str) -> st.SearchStrategy[dict[str, Any]]:
    """Valid arguments two times in three, so that calls reach the pipelines; else valid
    ones with a field made wrong, odd or left out, or with an unknown field added."""
    schema = TOOLS[tool].input_schema() if tool in TOOLS else TOOLS["search"].input_schema()
    required = set(schema.get("required", ()))
    fields, optional = {}, {}
    for name, prop in schema["properties"].items():
        valid = WORDS if prop.get("minLength") == 1 else from_schema(prop, name)
        (fields if name in required else optional)[name] = valid
    valid_args = st.fixed_dictionaries(fields, optional=optional)
    bad_value = st.sampled_from(sorted(schema["properties"])).flatmap(
        lambda name: st.tuples(st.just(name), wrong(schema["properties"][name]) | ODD_TEXT)
    )
    unknown = st.tuples(st.sampled_from(["kk", "stream", "__proto__", "", "\x00", "query\n"]), JSON)
    mutated = st.tuples(valid_args, bad_value | unknown | st.just(None)).map(_mutate)
    return st.one_of(valid_args, valid_args, mutated)


def _mutate(pair: tuple[dict[str, Any], tuple[str, Any] | None]) -> dict[str, Any]:
    args, change = pair
    if change is None:  # a required field left out
        return {k: v for k, v in args.items() if k not in ("query", "question", "claim")}
    return {**args, change[0]: change[1]}


_ABSENT = object()
# queries that find passages of the tiny corpus, with odd characters around them
WORDS = (
    st.lists(
        st.sampled_from(
            ["albendazole", "filariasis", "malaria", "curcumin", "ivermectin", "is", "the", "?"]
        )
        | st.text(min_size=1, max_size=8),
        min_size=1,
        max_size=6,
    )
    .map(" ".join)
    .filter(lambda s: s.strip() != "")
)
CALLS = st.lists(
    st.sampled_from([*TOOLS, *TOOLS, *TOOLS, "grep", "", "search\n"]).flatmap(
        lambda tool: st.tuples(
            st.just(tool),
            arguments(tool),
            # the client waits for the result, or leaves after a moment (a disconnect)
            st.one_of(st.none(), st.none(), st.none(), st.floats(0, 0.05)),
        )
    ),
    min_size=1,
    max_size=6,
)


@pytest.fixture
def server(corpus, tmp_path, registered) -> ScieraMCP:
    llm = fuzz_llm()
    return ScieraMCP({"tiny": corpus}, fuzz_settings(tmp_path), llm_factory=lambda s: llm)


def check(tool: str, result: Any, tmp: str) -> None:
    if result.is_error:
        (content,) = result.content
        text = content.text
        assert text and "\n" not in text and "Traceback" not in text, text
        assert len(text) <= 300, len(text)
        assert text != INTERNAL, (tool, text)  # the catch-all: an exception nobody expected
        for leak in (tmp, "/tmp/", "/site-packages/", "/work/", "/root/", "/home/"):
            assert leak not in text, text  # a server path (a corpus folder is <corpus NAME>)
        return
    assert tool in TOOLS
    data = result.structured_content
    TOOLS[tool].response.model_validate(data)
    assert json.loads(result.content[0].text) == data


@tiered(default=40, nightly=1000, calls=CALLS)
def test_generated_tool_calls_are_results_or_one_line_tool_errors(
    server: ScieraMCP, tmp_path, calls: list[tuple[str, dict[str, Any], float | None]]
) -> None:
    async def main() -> None:
        with anyio.fail_after(60):
            async with Client(server.server) as client:
                for tool, args, leave_after in calls:
                    if leave_after is None:
                        check(tool, await client.call_tool(tool, args), str(tmp_path))
                        continue
                    with anyio.move_on_after(leave_after):
                        check(tool, await client.call_tool(tool, args), str(tmp_path))
                after = await client.call_tool("search", {"query": "albendazole", "k": 1})
                assert not after.is_error and after.structured_content["items"]
                # no slot of the LLM queue is left taken by a call whose client left
                asked = await client.call_tool("ask", {"question": Q})
                assert not asked.is_error, asked
                assert (server.gate.running, server.gate.waiting) == (0, 0)

    anyio.run(main)
