"""``sciera eval pack|unpack``: results folders gzipped to fit a repository, and the derived
run files written back for tools outside sciera (:mod:`sciera.eval.pack`)."""

from __future__ import annotations

from pathlib import Path
from typing import Annotated

import typer

from sciera.cli.eval_cmds import eval_app
from sciera.errors import ScieraError

PackPaths = Annotated[list[Path], typer.Argument(help="Results folders (or single files).")]


@eval_app.command("pack")
def pack_cmd(
    paths: PackPaths,
    png: Annotated[
        bool, typer.Option(help="Re-encode PNGs losslessly (optipng, else Pillow).")
    ] = False,
) -> None:
    """Gzip a results folder's logs and per-query rows, drop the run files its logs give
    back byte for byte; summaries stay plain. A file given by name is gzipped (a PNG, with
    --png, re-encoded)."""
    from sciera.eval.pack import optimize_png, pack_folder
    from sciera.eval.resultlog import pack

    for root in paths:
        if root.is_file():  # one file: gzip it (a PNG: optimize it)
            if root.suffix != ".png":
                typer.echo(f"{pack(root)}", err=True)
            elif png:
                typer.echo(f"{root}: {optimize_png(root)} bytes smaller", err=True)
            continue
        if not root.is_dir():
            raise ScieraError(f"{root}: no such folder")
        written, removed = pack_folder(root)
        saved = sum(optimize_png(p) for p in sorted(root.rglob("*.png"))) if png else 0
        typer.echo(
            f"{root}: {len(written)} files gzipped, {len(removed)} derived files removed, "
            f"PNGs {saved} bytes smaller",
            err=True,
        )


@eval_app.command("unpack")
def unpack_cmd(paths: Annotated[list[Path], typer.Argument(help="Results folders.")]) -> None:
    """Write the run files (run.trec, answers.jsonl, ...) of each results directory back
    from its packed logs; the logs stay packed."""
    from sciera.eval.pack import unpack_folder

    for root in paths:
        if not root.is_dir():
            raise ScieraError(f"{root}: no such folder")
        typer.echo(f"{root}: {len(unpack_folder(root))} run files written back", err=True)
