"""``sciera serve --corpus DIR``: the HTTP API (extra ``sciera[server]``) under uvicorn."""

from __future__ import annotations

from pathlib import Path
from typing import Annotated

import typer

from sciera.cli.base import app, options_settings
from sciera.errors import ScieraError

DEFAULT_EXPERIMENT_DIRS = (Path("results"), Path("benchmarks/results"))
"""Where ``--experiments`` looks when not given: ``sciera eval run``'s default, then the
repository's benchmark results (relative to the working directory)."""

LOOPBACK = {"127.0.0.1", "::1", "localhost"}


def parse_corpora(values: list[str]) -> dict[str, Path]:
    """``DIR`` (named after its folder) or ``NAME=DIR`` values -> {name: dir}, in order."""
    corpora: dict[str, Path] = {}
    for value in values:
        name, sep, folder = value.partition("=")
        if not sep:
            name, folder = Path(value).resolve().name, value
        if not name or not folder:
            raise ScieraError(f"--corpus {value!r}: give DIR or NAME=DIR")
        if name in corpora:
            raise ScieraError(f"--corpus: the name {name!r} is used twice; use NAME=DIR")
        corpora[name] = Path(folder)
    return corpora


def default_experiments() -> Path | None:
    return next((d for d in DEFAULT_EXPERIMENT_DIRS if d.is_dir()), None)


@app.command("serve")
def serve(
    corpus: Annotated[
        list[str],
        typer.Option(
            "--corpus",
            help="Corpus directory, or NAME=DIR; repeat for more (the first is the default).",
        ),
    ],
    host: Annotated[str, typer.Option(help="Interface to listen on.")] = "127.0.0.1",
    port: Annotated[int, typer.Option(min=1, max=65535, help="TCP port.")] = 8000,
    api_key: Annotated[
        str | None,
        typer.Option(
            "--api-key",
            envvar="SCIERA_API_KEY",
            show_envvar=True,
            help="Require this key on every /v1 route (prefer the environment variable: "
            "a command line is visible to other users).",
        ),
    ] = None,
    cors_origin: Annotated[
        list[str] | None,
        typer.Option("--cors-origin", help="Allow browser calls from ORIGIN (repeatable)."),
    ] = None,
    queue_size: Annotated[
        int,
        typer.Option(
            "--queue-size", min=0, help="LLM requests that may wait while one runs (then 503)."
        ),
    ] = 4,
    experiments: Annotated[
        Path | None,
        typer.Option(
            "--experiments",
            help="Folder of `sciera eval run` results (default: ./results, else "
            "./benchmarks/results, if present).",
        ),
    ] = None,
    preset: Annotated[str | None, typer.Option(help="Settings preset (fast, quality).")] = None,
) -> None:
    """Serve the corpora over HTTP: /v1/search, /v1/rerank, /v1/ask (SSE), /v1/verify, /docs."""
    from sciera.errors import require

    require("fastapi", "server")
    uvicorn = require("uvicorn", "server")
    from sciera.serve import create_app

    settings = options_settings(preset, {})
    experiments = experiments if experiments is not None else default_experiments()
    if experiments is not None and not experiments.is_dir():
        raise ScieraError(f"--experiments {experiments}: not a folder")
    corpora = parse_corpora(corpus)
    application = create_app(
        corpora,
        settings,
        api_key=api_key or None,
        cors_origins=cors_origin or (),
        queue_size=queue_size,
        experiments_dir=experiments,
    )
    for name in corpora:  # found now rather than by the first request
        indexes = application.state.resources.describe(name)["indexes"]
        if not indexes or any(rec["stale"] for rec in indexes.values()):
            typer.echo(f"warning: {name}: index missing or stale; run `sciera index`", err=True)
    if host not in LOOPBACK and not api_key:
        typer.echo(f"warning: listening on {host} without an API key", err=True)
    names = ", ".join(corpora)
    typer.echo(f"serving {names} on http://{host}:{port} (API docs: /docs)", err=True)
    uvicorn.run(application, host=host, port=port, timeout_graceful_shutdown=10)
