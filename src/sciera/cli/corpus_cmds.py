"""``sciera ingest``: read documents into a corpus directory's passage store."""

from __future__ import annotations

from pathlib import Path
from typing import Annotated

import typer

from sciera.cli.base import app

_FORMATS = "beir, jsonl, csv, pubmed, openalex, scifact-sentences"


@app.command("ingest")
def ingest_cmd(
    path: Annotated[
        Path,
        typer.Argument(
            help="A BEIR folder, or a .jsonl/.json/.csv/.tsv/.xml(.gz) file of documents."
        ),
    ],
    corpus: Annotated[
        Path, typer.Option("--corpus", help="Corpus directory (holds store.sqlite).")
    ],
    format: Annotated[
        str | None,
        typer.Option("--format", help=f"Input format ({_FORMATS}); detected from PATH if omitted."),
    ] = None,
    id_field: Annotated[
        str | None, typer.Option("--id-field", help="Id field/column (beir, jsonl, csv).")
    ] = None,
    title_field: Annotated[
        str | None, typer.Option("--title-field", help="Title field/column (beir, jsonl, csv).")
    ] = None,
    text_field: Annotated[
        str | None, typer.Option("--text-field", help="Text field/column (beir, jsonl, csv).")
    ] = None,
    max_words: Annotated[
        int | None,
        typer.Option(
            "--max-words",
            min=1,
            help="Passage limit in words, title not counted (default: settings, 250).",
        ),
    ] = None,
    skip_bad: Annotated[
        bool,
        typer.Option(
            "--skip-bad", help="Skip malformed records and list them in an ingest report."
        ),
    ] = False,
) -> None:
    """Read documents, split them into sentence-preserving passages and store them.

    Re-running on the same file adds nothing; an interrupted run resumes after its
    last committed batch. A malformed record stops with file:record: field: problem.
    """
    from sciera.corpus import Fields, ingest
    from sciera.errors import InputError, ScieraError

    try:
        report = ingest(
            path,
            corpus,
            format=format,
            fields=Fields(id=id_field, title=title_field, text=text_field),
            max_words=max_words,
            skip_bad=skip_bad,
            progress=True,
        )
    except InputError as err:
        raise ScieraError(
            f"{err} (records before it are kept; rerun with --skip-bad to skip bad records, "
            "count them in the summary and list them in a report)"
        ) from err
    typer.echo(report.summary())
    if report.updated_ids:
        shown = ", ".join(report.updated_ids[:10])
        more = " ..." if report.updated > 10 else ""
        typer.echo(f"updated documents (passages replaced): {shown}{more}", err=True)
    if report.skip_report:
        typer.echo(f"skipped records are listed in {report.skip_report}", err=True)
