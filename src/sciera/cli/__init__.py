"""The ``sciera`` command: a thin Typer app (:data:`sciera.cli.base.app`); each command
group lives in its own module, adds its commands to the app, and imports heavy code only
when it runs."""

from __future__ import annotations

import logging
import os
import signal
import sys
from types import FrameType

import typer

from sciera.cli.base import app
from sciera.errors import ScieraError


def _register() -> None:
    # Each module adds its commands to ``app``; they import nothing heavy at import time.
    from sciera.cli import (  # noqa: F401
        ask_cmds,
        corpus_cmds,
        dataset_cmds,
        eval_cmds,
        judge_cmds,
        llm_cmds,
        mcp_cmds,
        rerank_cmds,
        research_cmds,
        search_cmds,
        serve_cmds,
        train_cmds,
        verify_cmds,
    )


def _interrupt(signum: int, frame: FrameType | None) -> None:
    raise KeyboardInterrupt


def main() -> None:
    # model loading is not the user's long work: no third-party bars ("Loading weights")
    # between sciera's own lines (read when transformers is first imported)
    os.environ.setdefault("HF_HUB_DISABLE_PROGRESS_BARS", "1")
    logging.basicConfig(level=logging.WARNING, format="%(levelname)s %(name)s: %(message)s")
    # the level on the handler too: bm25s sets its own logger to DEBUG when imported, and
    # a logger's own level decides what reaches the root's handler ("DEBUG bm25s:
    # Building index from IDs" once per query otherwise)
    for handler in logging.getLogger().handlers:
        handler.setLevel(logging.WARNING)
    # SIGTERM (kill, a job scheduler, a container stop) unwinds like Ctrl-C: open
    # transactions roll back, files are closed, and the command can be run again to resume.
    signal.signal(signal.SIGTERM, _interrupt)
    _register()
    try:
        app()
    except ScieraError as err:
        typer.echo(f"error: {err}", err=True)
        sys.exit(2)
    except Exception as err:
        # a bad setting read where no option set it (the environment, a preset): one line
        from pydantic import ValidationError

        from sciera.cli.base import settings_error

        if not isinstance(err, ValidationError) or err.title != "Settings":
            raise
        typer.echo(f"error: {settings_error(err)}", err=True)
        sys.exit(2)
