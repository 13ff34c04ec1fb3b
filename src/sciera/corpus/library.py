"""A folder of papers as a corpus: ingest every file in it, and prune what was removed.

:func:`ingest_folder` reads each data file under a folder (recursively, in name order;
hidden files and folders skipped) with the reader its content or name calls for (a PDF,
a JATS article, PubMed XML, JSON lines ...). Files whose format cannot be told are listed
as ignored. Each file is ingested as :func:`~sciera.corpus.ingest.ingest` does: a file
already read to the end and unchanged (same size and modification time, or same sha256)
is not read again, unless its sentences were cut by older splitter rules (then only they
are rewritten); a changed file is read again and its documents updated. PDFs are read
first: a paper given both as PDF and as JATS XML (the same DOI, so the same document id)
keeps the XML's text and structure.

:func:`prune` drops from the store the documents whose source file is gone, and those a
changed file no longer holds (read from an older version of a file that was read to the
end since), with their passages, sentences and references; the journal forgets removed
files. Indexes built before are then stale and are rebuilt by ``sciera index``.
"""

from __future__ import annotations

from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path

from sciera.corpus.ingest import IngestReport, ingest
from sciera.corpus.readers import detect_format
from sciera.corpus.store import PassageStore
from sciera.errors import ScieraError


@dataclass(frozen=True, slots=True)
class FolderReport:
    """What one folder ingest did: a report per file read, the files ignored (format
    unknown) and, with ``skip_bad``, the files that could not be read at all (a CSV
    without an id column, malformed XML ...) with their one-line errors."""

    reports: tuple[IngestReport, ...]
    ignored: tuple[str, ...]
    failed: tuple[str, ...] = ()

    def summary(self) -> str:
        total = {k: sum(getattr(r, k) for r in self.reports) for k in
                 ("added", "updated", "unchanged", "skipped", "passages",
                  "sentences_refreshed")}  # fmt: skip
        refreshed = total["sentences_refreshed"]
        return (
            f"{len(self.reports)} files: {total['added']} documents added, "
            f"{total['updated']} updated, {total['unchanged']} unchanged; "
            f"{total['passages']} passages; {total['skipped']} skipped; "
            f"{len(self.ignored)} files of unknown format ignored"
            + (f"; sentences refreshed in {refreshed} unchanged documents" if refreshed else "")
            + (f"; {len(self.failed)} files could not be read" if self.failed else "")
        )


def data_files(folder: Path) -> Iterator[Path]:
    """Every regular file under ``folder``, hidden ones left out: PDFs first, then the
    others, each in name order (so that a paper given both as PDF and as XML, one document
    by its DOI, keeps the publisher's XML)."""
    for path in sorted(folder.rglob("*"), key=lambda p: (p.suffix.lower() != ".pdf", p)):
        rel = path.relative_to(folder)
        if any(part.startswith(".") for part in rel.parts) or not path.is_file():
            continue
        yield path


def ingest_folder(
    folder: Path | str,
    corpus_dir: Path | str,
    *,
    max_words: int | None = None,
    skip_bad: bool = False,
    progress: bool = False,
) -> FolderReport:
    """Ingest every data file under ``folder`` into ``corpus_dir`` (see the module doc).
    A bad record or an unreadable file stops the run (files before it are kept) unless
    ``skip_bad``: then bad records are skipped and listed as for one file, and a file that
    cannot be read at all is listed in :attr:`FolderReport.failed`."""
    folder, corpus_dir = Path(folder), Path(corpus_dir).resolve()
    if not folder.is_dir():
        raise ScieraError(f"{folder}: not a folder")
    reports: list[IngestReport] = []
    ignored: list[str] = []
    failed: list[str] = []
    for file in data_files(folder):
        if file.resolve().is_relative_to(corpus_dir):
            continue  # the corpus directory inside the folder
        try:
            name = detect_format(file)
        except ScieraError:
            ignored.append(str(file))
            continue
        try:
            report = ingest(
                file,
                corpus_dir,
                format=name,
                max_words=max_words,
                skip_bad=skip_bad,
                progress=progress,
            )
        except ScieraError as err:  # InputError too: a file-level problem
            if not skip_bad:
                raise
            failed.append(str(err))
            continue
        reports.append(report)
    return FolderReport(tuple(reports), tuple(ignored), tuple(failed))


@dataclass(frozen=True, slots=True)
class PruneReport:
    """What :func:`prune` removed (or would remove, with ``dry_run``)."""

    removed_files: tuple[str, ...]  # source files that are gone
    documents: tuple[str, ...]  # documents dropped (of removed files or stale)

    def summary(self) -> str:
        return (
            f"{len(self.documents)} documents removed; {len(self.removed_files)} source files gone"
        )


def prune(corpus_dir: Path | str, *, dry_run: bool = False) -> PruneReport:
    """Drop documents whose source file is gone or no longer holds them."""
    with PassageStore.open(corpus_dir) as store:
        gone = {src for src in store.journal_sources() if not Path(src).exists()}
        drop: list[str] = []
        for source, docs in store.sources().items():
            if not Path(source).exists():
                gone.add(source)
                drop.extend(d for d, _ in docs)
                continue
            entry = store.journal_entry(source)
            if entry is not None and entry.complete:
                drop.extend(d for d, digest in docs if digest and digest != entry.file_hash)
        if not dry_run and (drop or gone):
            with store.transaction() as tx:
                for doc_id in drop:
                    tx.delete(doc_id)
                for source in gone:
                    tx.drop_journal(source)
    return PruneReport(tuple(sorted(gone)), tuple(sorted(drop)))
