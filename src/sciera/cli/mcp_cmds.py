"""``sciera mcp --corpus DIR``: the MCP server over stdio (extra ``sciera[server]``), for agent
hosts that start it as a subprocess."""

from __future__ import annotations

from typing import Annotated

import typer

from sciera.cli.base import app, options_settings
from sciera.cli.serve_cmds import parse_corpora


@app.command("mcp")
def mcp(
    corpus: Annotated[
        list[str],
        typer.Option(
            "--corpus",
            help="Corpus directory, or NAME=DIR; repeat for more (the first is the default).",
        ),
    ],
    queue_size: Annotated[
        int,
        typer.Option(
            "--queue-size",
            min=0,
            help="LLM calls (ask, LLM rerankers) that may wait while one runs (then refused).",
        ),
    ] = 4,
    preset: Annotated[str | None, typer.Option(help="Settings preset (fast, quality).")] = None,
) -> None:
    """Serve the corpora to an MCP host over stdio: tools search, rerank, ask and verify."""
    from sciera.errors import require

    require("fastapi", "server")
    require("mcp", "server")
    import anyio

    from sciera.serve.mcp_server import TOOLS, ScieraMCP

    settings = options_settings(preset, {})
    corpora = parse_corpora(corpus)
    server = ScieraMCP(corpora, settings, queue_size=queue_size)
    # stdout carries the protocol: everything for the user goes to stderr
    for name in corpora:  # found now rather than by the first call
        indexes = server.resources.describe(name)["indexes"]
        if not indexes or any(rec["stale"] for rec in indexes.values()):
            typer.echo(f"warning: {name}: index missing or stale; run `sciera index`", err=True)
    names = ", ".join(corpora)
    tools = ", ".join(TOOLS)
    typer.echo(f"sciera mcp: serving {names} over stdio (tools: {tools})", err=True)
    anyio.run(server.run_stdio)
