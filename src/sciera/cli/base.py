"""The root Typer app every command module adds its commands to (``sciera.cli`` registers
the modules and runs it)."""

from __future__ import annotations

import typer

app = typer.Typer(
    name="sciera",
    help="Scientific QA over papers, robust to similar-but-irrelevant evidence.",
    no_args_is_help=True,
    pretty_exceptions_enable=False,
    add_completion=False,
)
