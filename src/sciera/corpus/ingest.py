"""``ingest``: read a corpus file, cut passages and store them, resumably and idempotently.

Records are committed in batches (default 500), each batch in one transaction
together with the journal row that says how far the file has been read. A run
killed mid-way therefore loses at most the batch in flight, and the next run on
the same file (same content hash, same format, fields and ``max_words``)
resumes after the last committed record. A file already read to the end is not
read again. Documents are compared by content hash, so ingesting the same
documents from another file adds nothing; a known id with new content replaces
that document's passages and counts as updated.

A structured paper (jats, pdf) is cut inside its layout's units
(:func:`~sciera.corpus.fulltext.chunk.chunk_paper`): passages keep their section, and its
references are stored apart.

Each document's sentences are stored with its passages (the format's own sentence list for
``scifact-sentences``, the sentence splitter's for every other format), so a rationale is a
(document, sentence index) pair: :meth:`~sciera.corpus.store.PassageStore.sentences`.
The journal records the splitter's rules (:data:`~sciera.corpus.sentences.RULES_VERSION`)
with each file; a file read under older rules is read again by the next run on it, which
rewrites only its documents' sentences (unchanged passages stay, and so does the
fingerprint the indexes are built for). :func:`stale_sentences` lists such files.

A bad record stops the run with an :class:`~sciera.errors.InputError` (records
before it are committed). With ``skip_bad`` it is skipped instead and listed in
``<corpus_dir>/ingest-report-<timestamp>.jsonl``.
"""

from __future__ import annotations

import json
import logging
import os
import time
from dataclasses import dataclass, field
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

from sciera.corpus.chunker import chunk_with_sentences
from sciera.corpus.fulltext.chunk import chunk_paper
from sciera.corpus.journal import JournalEntry, file_sha256
from sciera.corpus.readers import READERS, Fields, RecordReader, detect_format, get_reader
from sciera.corpus.sentences import RULES_VERSION
from sciera.corpus.store import DuplicateDocumentError, PassageStore, StoreTransaction
from sciera.errors import InputError, ScieraError
from sciera.progress import ProgressCallback, ingest_progress

logger = logging.getLogger(__name__)
_MAX_LISTED_UPDATES = 100


@dataclass(frozen=True, slots=True)
class IngestReport:
    """What one ``ingest`` run did. Counts cover the records read in this run."""

    source: str  # the data file read (a BEIR folder's corpus.jsonl)
    corpus_dir: str
    format: str
    added: int
    updated: int
    unchanged: int
    skipped: int
    passages: int  # passages written (of added and updated documents)
    records: int  # records read in this run
    resumed_after: int  # records committed by an earlier run and not read again
    seconds: float
    skip_report: str | None = None  # the skipped-records listing, if any record was skipped
    updated_ids: tuple[str, ...] = field(default=())  # first 100 updated doc ids
    # unchanged documents whose stored sentences were rewritten (new splitter rules)
    sentences_refreshed: int = 0

    @property
    def passages_per_second(self) -> float:
        return self.passages / self.seconds if self.seconds > 0 else 0.0

    def summary(self) -> str:
        """One line for humans."""
        parts = [
            f"{Path(self.source).name}: {self.added} documents added, {self.updated} updated, "
            f"{self.unchanged} unchanged; {self.passages} passages; {self.skipped} skipped"
        ]
        if self.sentences_refreshed:
            parts.append(f"sentences refreshed in {self.sentences_refreshed} unchanged documents")
        if self.resumed_after:
            parts.append(f"{self.resumed_after} records already ingested")
        parts.append(f"{self.seconds:.1f} s")
        return "; ".join(parts)


class _SkipLog:
    """JSON-lines listing of skipped records, created at the first skip."""

    def __init__(self, corpus_dir: Path) -> None:
        stamp = datetime.now(UTC).strftime("%Y%m%dT%H%M%S%fZ")
        self.path = corpus_dir / f"ingest-report-{stamp}.jsonl"
        self.count = 0

    def add(self, err: InputError) -> None:
        row = {"source": err.path, "record": err.line, "field": err.field, "problem": err.problem}
        with open(self.path, "a", encoding="utf-8") as handle:
            handle.write(json.dumps({**row, "message": str(err)}, ensure_ascii=False) + "\n")
        self.count += 1

    @property
    def written(self) -> str | None:
        return str(self.path) if self.count else None


class _Run:
    """The record loop of one ingest: counts, batching and checkpoints."""

    def __init__(
        self,
        store: PassageStore,
        reader: RecordReader,
        file: Path,
        journal: JournalEntry,
        max_words: int,
        skip_log: _SkipLog | None,
        batch_size: int,
    ) -> None:
        self.store, self.reader, self.file = store, reader, file
        self.journal, self.max_words = journal, max_words
        self.skip_log, self.batch_size = skip_log, batch_size
        self.counts = {
            "added": 0,
            "updated": 0,
            "unchanged": 0,
            "skipped": 0,
            "sentences_refreshed": 0,
        }
        self.passages = self.records = 0
        self.last = journal.last_record
        self.updated_ids: list[str] = []

    def run(self, update: ProgressCallback) -> None:
        tx = self.store.transaction()
        pending = 0
        try:
            for record_no, raw in self.reader.records(self.file):
                if record_no <= self.journal.last_record:
                    continue
                self._one(tx, record_no, raw)
                self.last, pending, self.records = record_no, pending + 1, self.records + 1
                if pending >= self.batch_size:
                    self._checkpoint(tx, complete=False)
                    tx, pending = self.store.transaction(), 0
                    update(self.records, self.passages)
        except InputError:
            self._checkpoint(tx, complete=False)  # keep every record before the bad one
            raise
        except BaseException:
            tx.rollback()
            raise
        self._checkpoint(tx, complete=True)
        update(self.records, self.passages)

    def _one(self, tx: StoreTransaction, record_no: int, raw: Any) -> None:
        try:
            record = self.reader.parse_record(self.file, record_no, raw)
            doc, places = record.document, None
            try:
                if record.layout is None:
                    passages, sentences = chunk_with_sentences(
                        doc, self.max_words, record.sentences
                    )
                else:  # a paper: passages cut inside sections, captions and tables
                    passages, sentences, places = chunk_paper(doc, record.layout, self.max_words)
            except ValueError as exc:
                raise InputError(self.file, record_no, "sentences", str(exc)) from exc
            before = tx.sentences_rewritten
            try:
                result = tx.put(
                    doc,
                    passages,
                    sentences=sentences,
                    source=self.journal.source,
                    source_hash=self.journal.file_hash,
                    record_no=record_no,
                    places=places,
                    references=record.references,
                )
            except DuplicateDocumentError as exc:
                raise InputError(self.file, record_no, self.reader.id_field, str(exc)) from exc
        except InputError as err:
            if self.skip_log is None:
                raise
            self.skip_log.add(err)
            self.counts["skipped"] += 1
            logger.info("skipped %s", err)
            return
        self.counts[result] += 1
        self.counts["sentences_refreshed"] += tx.sentences_rewritten - before
        if result != "unchanged":
            self.passages += len(passages)
        if result == "updated":
            logger.info("document %s changed: its passages were replaced", doc.doc_id)
            if len(self.updated_ids) < _MAX_LISTED_UPDATES:
                self.updated_ids.append(doc.doc_id)

    def _checkpoint(self, tx: StoreTransaction, complete: bool) -> None:
        entry = self.journal
        tx.set_journal(
            JournalEntry(
                entry.source,
                entry.size,
                entry.mtime_ns,
                entry.file_hash,
                entry.params,
                self.last,
                complete,
            )
        )
        tx.commit()


def ingest(
    path: Path | str,
    corpus_dir: Path | str,
    *,
    format: str | None = None,
    fields: Fields | None = None,
    max_words: int | None = None,
    skip_bad: bool = False,
    progress: bool = False,
    batch_size: int = 500,
) -> IngestReport:
    """Read documents from ``path`` into the passage store of ``corpus_dir``.

    ``format`` is a reader name (:data:`sciera.corpus.readers.READERS`), detected from the
    path when omitted (a folder of papers: :func:`~sciera.corpus.library.ingest_folder`);
    ``fields`` renames the id/title/text fields of the beir, jsonl and csv formats;
    ``max_words`` defaults to ``Settings.corpus.max_words`` (250). ``progress`` draws a bar
    on stderr when it is a terminal. Raises :class:`InputError` at the first bad record
    unless ``skip_bad`` is set.
    """
    started = time.perf_counter()
    path, corpus_dir = Path(path), Path(corpus_dir)
    if not path.exists():
        raise ScieraError(f"{path}: no such file or folder")
    name = format or detect_format(path)
    reader = get_reader(name, fields)
    file = reader.source_file(path).resolve()
    if max_words is None:
        from sciera.settings import load_settings

        max_words = load_settings().corpus.max_words
    if max_words < 1 or batch_size < 1:
        raise ScieraError(f"max_words and batch_size must be positive ({max_words}, {batch_size})")
    params = {
        "format": name,
        "fields": (fields or Fields()).as_dict(),
        "max_words": max_words,
        "sentences": _sentence_rules(reader),
    }
    with PassageStore.open(corpus_dir, create=True) as store:
        store.check()  # never write into a damaged file
        store.upgrade()  # a corpus from before sentences were kept: read its files again
        journal = _start_entry(store, file, params)
        skip_log = _SkipLog(corpus_dir) if skip_bad else None
        run = _Run(store, reader, file, journal, max_words, skip_log, batch_size)
        if not journal.complete:
            with ingest_progress(f"ingesting {file.name}", progress) as update:
                run.run(update)
    return IngestReport(
        source=str(file),
        corpus_dir=str(corpus_dir),
        format=name,
        passages=run.passages,
        records=run.records,
        resumed_after=journal.last_record,
        seconds=time.perf_counter() - started,
        skip_report=skip_log.written if skip_log else None,
        updated_ids=tuple(run.updated_ids),
        **run.counts,
    )


def _sentence_rules(reader: RecordReader) -> int | str:
    """What cut a file's stored sentences: the format (``given``) or the splitter's rules."""
    return "given" if reader.gives_sentences else RULES_VERSION


def stale_sentences(store: PassageStore) -> list[str]:
    """The source files whose stored sentences were cut by older rules of the splitter
    (ingesting such a file again refreshes them in place); files whose format gives its
    sentences never are."""
    stale = []
    for source in store.journal_sources():
        entry = store.journal_entry(source)
        if entry is None:
            continue
        reader = READERS.get(str(entry.params.get("format")))
        if reader is not None and reader.gives_sentences:
            continue
        if entry.params.get("sentences") != RULES_VERSION:
            stale.append(source)
    return stale


def _start_entry(store: PassageStore, file: Path, params: dict[str, Any]) -> JournalEntry:
    """The journal entry this run starts from: resumed if file and parameters match."""
    stat = os.stat(file)
    previous = store.journal_entry(str(file))
    same_stat = previous is not None and (previous.size, previous.mtime_ns) == (
        stat.st_size,
        stat.st_mtime_ns,
    )
    file_hash = previous.file_hash if same_stat and previous else file_sha256(file)
    if previous is not None and previous.file_hash == file_hash and previous.params == params:
        last, complete = previous.last_record, previous.complete
        if last:
            logger.info("%s: resuming after record %d", file, last)
    else:
        last, complete = 0, False
    return JournalEntry(
        str(file), stat.st_size, stat.st_mtime_ns, file_hash, params, last, complete
    )
