"""The ``sciera`` command: a thin Typer app (:data:`sciera.cli.base.app`); each command
group lives in its own module, adds its commands to the app, and imports heavy code only
when it runs."""

from __future__ import annotations

import logging
import os
import signal
import sys
from types import FrameType
from typing import TextIO

import typer

from sciera.cli.base import app
from sciera.errors import ScieraError


def _register() -> None:
    # Each module adds its commands to ``app``; they import nothing heavy at import time.
    from sciera.cli import (  # noqa: F401
        ask_cmds,
        corpus_cmds,
        dataset_bioasq_cmds,
        dataset_cmds,
        eval_cmds,
        eval_pack_cmds,
        judge_cmds,
        llm_cmds,
        mcp_cmds,
        rerank_cmds,
        research_cmds,
        search_cmds,
        serve_cmds,
        train_calibrator_cmds,
        train_cmds,
        train_verifier_cmds,
        verify_cmds,
    )


ONE_TIME_WORK = ("sciera.llm.weights", "sciera.rerank.onnx_int8")
"""Loggers whose INFO lines announce slow work done once per machine and model (LLM weights
assembled from their packages and hashed, a cross-encoder exported to int8 ONNX): the
command prints them, so a first run says what it is doing instead of pausing in silence."""


def show_one_time_work(stream: TextIO | None = None) -> logging.Handler:
    """Print the INFO lines of :data:`ONE_TIME_WORK` as ``sciera: ...`` on ``stream``
    (stderr); warnings and errors keep to the root handler. Returns the handler added."""
    handler = logging.StreamHandler(stream)
    handler.setFormatter(logging.Formatter("sciera: %(message)s"))
    handler.addFilter(lambda record: record.levelno == logging.INFO)
    for name in ONE_TIME_WORK:
        logger = logging.getLogger(name)
        logger.setLevel(logging.INFO)
        logger.addHandler(handler)
    return handler


def _interrupt(signum: int, frame: FrameType | None) -> None:
    raise KeyboardInterrupt


INTERRUPTED = 130
"""The exit status of a command stopped by Ctrl-C or SIGTERM (Typer's, the shell's 128 + 2)."""
INTERRUPTED_LINE = "interrupted: finished work is kept; the same command again goes on from there"


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
    show_one_time_work()
    # SIGTERM (kill, a job scheduler, a container stop) unwinds like Ctrl-C: open
    # transactions roll back, files are closed, and the command can be run again to resume.
    signal.signal(signal.SIGTERM, _interrupt)
    _register()
    try:
        app()
    except SystemExit as done:
        if done.code == INTERRUPTED:  # Typer's exit on KeyboardInterrupt, which says nothing
            typer.echo(INTERRUPTED_LINE, err=True)
        raise
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
