"""A folder of papers as a corpus: ingest every file in it, and prune what was removed.

:func:`ingest_folder` reads each data file under a folder (recursively, in name order;
hidden files and folders skipped) with the reader its content or name calls for (a PDF, a
JATS article, PubMed XML, JSON lines ...). Files that are not documents of a known kind are
skipped and named in the summary: those whose format cannot be told (``notes.txt``), and
tables or JSON lines whose header or first record has no id or no text field (a
``MANIFEST.tsv`` beside the papers:
:meth:`~sciera.corpus.readers.RecordReader.not_documents`). A damaged document file
(malformed XML, a broken PDF) is not skipped: it stops the run, or with ``skip_bad`` is
listed as failed. Each file is ingested as :func:`~sciera.corpus.ingest.ingest` does: a file
already read to the end and unchanged (same size and modification time, or same sha256) is
not read again, unless its sentences were cut by older splitter rules (then only they
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
from sciera.corpus.readers import detect_format, get_reader
from sciera.corpus.store import PassageStore
from sciera.errors import ScieraError

_MAX_NAMED = 10  # skipped files named in the summary


@dataclass(frozen=True, slots=True)
class FolderReport:
    """What one folder ingest did: a report per file read, the files skipped as not
    documents (``ignored``: format unknown; ``not_documents``: ``(file, why)`` for a table
    or JSON lines whose header has no id or text field) and, with ``skip_bad``, the document
    files that could not be read at all (malformed XML, a broken PDF ...) with their
    one-line errors."""

    reports: tuple[IngestReport, ...]
    ignored: tuple[str, ...]
    failed: tuple[str, ...] = ()
    not_documents: tuple[tuple[str, str], ...] = ()

    def summary(self) -> str:
        total = {k: sum(getattr(r, k) for r in self.reports) for k in
                 ("added", "updated", "unchanged", "skipped", "passages",
                  "sentences_refreshed")}  # fmt: skip
        refreshed = total["sentences_refreshed"]
        return (
            f"{len(self.reports)} files: {total['added']} documents added, "
            f"{total['updated']} updated, {total['unchanged']} unchanged; "
            f"{total['passages']} passages; "
            f"{total['skipped']} bad record{'' if total['skipped'] == 1 else 's'} skipped"
            + self._skipped_files()
            + (f"; sentences refreshed in {refreshed} unchanged documents" if refreshed else "")
            + (f"; {len(self.failed)} files could not be read" if self.failed else "")
        )

    def _skipped_files(self) -> str:
        """``; skipped 2 files that are not documents: MANIFEST.tsv, notes.txt`` (or "")."""
        names = sorted(Path(f).name for f in (*self.ignored, *(f for f, _ in self.not_documents)))
        if not names:
            return ""
        shown = ", ".join(names[:_MAX_NAMED]) + (" ..." if len(names) > _MAX_NAMED else "")
        what = "file that is not a document" if len(names) == 1 else "files that are not documents"
        return f"; skipped {len(names)} {what}: {shown}"


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
    """Ingest every document file under ``folder`` into ``corpus_dir`` (see the module doc);
    files that are not documents are skipped and listed in the report. A bad record or a
    document file that cannot be read stops the run (files before it are kept) unless
    ``skip_bad``: then bad records are skipped and listed as for one file, and a file that
    cannot be read at all is listed in :attr:`FolderReport.failed`."""
    folder, corpus_dir = Path(folder), Path(corpus_dir).resolve()
    if not folder.is_dir():
        raise ScieraError(f"{folder}: not a folder")
    reports: list[IngestReport] = []
    ignored: list[str] = []
    failed: list[str] = []
    not_documents: list[tuple[str, str]] = []
    for file in data_files(folder):
        if file.resolve().is_relative_to(corpus_dir):
            continue  # the corpus directory inside the folder
        try:
            name = detect_format(file)
        except ScieraError:
            ignored.append(str(file))
            continue
        why = get_reader(name).not_documents(file)
        if why is not None:
            not_documents.append((str(file), why))
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
    return FolderReport(tuple(reports), tuple(ignored), tuple(failed), tuple(not_documents))


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
