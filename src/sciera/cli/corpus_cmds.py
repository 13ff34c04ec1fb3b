"""``sciera ingest``: read documents (or a folder of papers) into a corpus directory's
passage store; ``sciera corpus show`` / ``prune``: look at a document, drop removed files."""

from __future__ import annotations

from pathlib import Path
from typing import TYPE_CHECKING, Annotated

import typer

from sciera.cli.base import app

if TYPE_CHECKING:
    from sciera.corpus import IngestReport

_FORMATS = "beir, jsonl, csv, pubmed, openalex, pubmedqa, scifact-sentences, jats, pdf"

corpus_app = typer.Typer(help="Look at a corpus directory: a document's outline; prune.")
app.add_typer(corpus_app, name="corpus")


_PathArg = Annotated[
    Path,
    typer.Argument(
        help="A BEIR folder, a .jsonl/.json/.csv/.tsv/.xml/.nxml(.gz)/.pdf file, or a "
        "folder of papers (every document file in it, each read by its own reader; "
        "other files skipped)."
    ),
]
_IngestCorpusOpt = Annotated[
    Path, typer.Option("--corpus", help="Corpus directory (holds store.sqlite).")
]
_FormatOpt = Annotated[
    str | None,
    typer.Option("--format", help=f"Input format ({_FORMATS}); detected from PATH if omitted."),
]
_IdFieldOpt = Annotated[
    str | None, typer.Option("--id-field", help="Id field/column (beir, jsonl, csv).")
]
_TitleFieldOpt = Annotated[
    str | None, typer.Option("--title-field", help="Title field/column (beir, jsonl, csv).")
]
_TextFieldOpt = Annotated[
    str | None, typer.Option("--text-field", help="Text field/column (beir, jsonl, csv).")
]
_MaxWordsOpt = Annotated[
    int | None,
    typer.Option(
        "--max-words",
        min=1,
        help="Passage limit in words, title not counted (default: settings, 250).",
    ),
]
_SkipBadOpt = Annotated[
    bool,
    typer.Option("--skip-bad", help="Skip malformed records and list them in an ingest report."),
]


@app.command("ingest")
def ingest_cmd(
    path: _PathArg,
    corpus: _IngestCorpusOpt,
    format: _FormatOpt = None,
    id_field: _IdFieldOpt = None,
    title_field: _TitleFieldOpt = None,
    text_field: _TextFieldOpt = None,
    max_words: _MaxWordsOpt = None,
    skip_bad: _SkipBadOpt = False,
) -> None:
    """Read documents, split them into sentence-preserving passages and store them.

    Re-running on the same file adds nothing; an interrupted run resumes after its
    last committed batch. A malformed record stops with file:record: field: problem.
    """
    from sciera.corpus import Fields, ingest
    from sciera.errors import InputError, ScieraError

    fields = Fields(id=id_field, title=title_field, text=text_field)
    folder = path.is_dir() and not (path / "corpus.jsonl").is_file()
    if folder and (format is not None or not fields.is_default()):
        raise ScieraError(
            f"{path}: a folder of papers is read file by file, each by its own format; "
            "--format and the field options apply to one file or a BEIR folder"
        )
    try:
        if folder:
            _ingest_folder(path, corpus, max_words, skip_bad)
            return
        report = ingest(
            path,
            corpus,
            format=format,
            fields=fields,
            max_words=max_words,
            skip_bad=skip_bad,
            progress=True,
        )
    except InputError as err:
        raise ScieraError(
            f"{err} (records before it are kept; rerun with --skip-bad to skip bad records, "
            "count them in the summary and list them in a report)"
        ) from err
    _print_report(report)


def _ingest_folder(path: Path, corpus: Path, max_words: int | None, skip_bad: bool) -> None:
    """Ingest every document file of a folder of papers, each by its own reader: per file
    what changed (stderr), the files skipped or unreadable (stderr), then the summary."""
    from sciera.corpus.library import ingest_folder

    many = ingest_folder(path, corpus, max_words=max_words, skip_bad=skip_bad, progress=True)
    for one in many.reports:
        if one.added or one.updated or one.skipped:
            typer.echo(one.summary(), err=True)
        if one.skip_report:
            typer.echo(f"skipped records are listed in {one.skip_report}", err=True)
    for file, why in many.not_documents:
        typer.echo(f"skipped {file}: not a document file: {why}", err=True)
    for message in many.failed:
        typer.echo(f"could not read: {message}", err=True)
    typer.echo(many.summary())


def _print_report(report: IngestReport) -> None:
    """One file's (or BEIR folder's) summary, then on stderr the documents whose passages
    were replaced (the first ten) and where the skipped records are listed."""
    typer.echo(report.summary())
    if report.updated_ids:
        shown = ", ".join(report.updated_ids[:10])
        more = " ..." if report.updated > 10 else ""
        typer.echo(f"updated documents (passages replaced): {shown}{more}", err=True)
    if report.skip_report:
        typer.echo(f"skipped records are listed in {report.skip_report}", err=True)


@corpus_app.command("show")
def show_cmd(
    doc_id: Annotated[str, typer.Argument(help="Document id (a paper's DOI, PMCID, PMID ...).")],
    corpus: Annotated[
        Path, typer.Option("--corpus", help="Corpus directory (holds store.sqlite).")
    ],
    references: Annotated[
        bool, typer.Option("--references", help="Also list the paper's references.")
    ] = False,
) -> None:
    """Print a document's metadata and outline: its sections in order with their passage
    counts (captions and tables marked), then its sentence and reference counts."""
    from sciera.corpus import PassageStore
    from sciera.errors import ScieraError

    with PassageStore.open(corpus) as store:
        doc = store.get_document(doc_id)
        if doc is None:
            raise ScieraError(f"{corpus}: no document {doc_id!r}")
        typer.echo(f"{doc.doc_id}: {doc.title}")
        for key, value in doc.metadata.items():
            shown = ", ".join(value) if isinstance(value, list | tuple) else value
            typer.echo(f"  {key}: {shown}")
        outline = store.outline(doc_id)
        typer.echo(f"outline ({sum(n for _, n in outline)} passages):")
        last = None
        for place, count in outline:
            head = place.section or "(no section)"
            if head != last:
                typer.echo(f"  {head}")
                last = head
            what = "" if place.kind == "text" else f"[{place.kind}] "
            where = place.subsection or ""
            plural = "s" if count != 1 else ""
            typer.echo(f"    {what}{where}{' ' if where else ''}{count} passage{plural}")
        refs = store.references(doc_id)
        sentences = store.sentence_rows([doc_id]).get(doc_id, [])
        typer.echo(f"{len(sentences)} sentences; {len(refs)} references")
        if references:
            for ref in refs:
                typer.echo(f"  [{ref.label}] {ref.text}")


@corpus_app.command("prune")
def prune_cmd(
    corpus: Annotated[
        Path, typer.Option("--corpus", help="Corpus directory (holds store.sqlite).")
    ],
    dry_run: Annotated[
        bool, typer.Option("--dry-run", help="List what would be removed; change nothing.")
    ] = False,
) -> None:
    """Remove the documents of source files that were deleted, and those a changed file no
    longer holds, with their passages, sentences and references. Rebuild the indexes
    afterwards (`sciera index`)."""
    from sciera.corpus.library import prune

    report = prune(corpus, dry_run=dry_run)
    for source in report.removed_files:
        typer.echo(f"gone: {source}", err=True)
    for doc_id in report.documents[:20]:
        typer.echo(f"{'would remove' if dry_run else 'removed'}: {doc_id}", err=True)
    typer.echo(("dry run: " if dry_run else "") + report.summary())
