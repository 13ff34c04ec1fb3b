"""The passage store: documents, passages and sentences in one SQLite file
(``DIR/store.sqlite``).

WAL mode, so readers (indexers, the server) see committed data while an
ingest writes. Documents keep their metadata (JSON) and a content hash over
title, text, metadata and the passages cut from them; passages keep
``passage_id``, ``doc_id``, ``idx``, ``title`` and ``text`` in insertion order;
sentences keep ``doc_id``, ``idx`` (position in the document's sentence list: what a
rationale index points at), the ``passage_id`` they fall in and their ``text`` verbatim,
written in the same transaction as the document's passages.

Schema 2 added the sentences. A schema-1 store (ingested before) opens as it was, so
search and ask keep working; reading its sentences raises a one-line
:class:`~sciera.errors.ScieraError` asking to re-ingest. The first write upgrades it in
place (the sentences table, and every journal entry rewound so that re-ingesting the
same files re-reads them and fills in the sentences without changing any passage).

Schema 3 added full-text papers: each passage's ``section`` (top-level heading),
``subsection`` (the headings below it, joined by " > ") and ``kind`` (text, caption or
table), empty for abstracts, and the ``doc_references`` table (a paper's reference list,
never passages). A schema-2 store opens as it was and is upgraded by the first write
(three columns with defaults and an empty table: nothing is re-read).
A damaged file (truncated, overwritten, not SQLite) or a full disk is a one-line
:class:`~sciera.errors.ScieraError` naming the file from whichever statement meets it
(:mod:`sciera.corpus.sqlite_errors`); :meth:`PassageStore.check` runs SQLite's
``integrity_check``, and ingest runs it before writing.

Writes go through :class:`StoreTransaction`; each commit that changes anything
also advances the store fingerprint (a hash chain in the ``meta`` table), so
``fingerprint()`` is one row read and changes whenever a passage is added,
removed or changed.
"""

from __future__ import annotations

import json
import sqlite3
import threading
from collections.abc import Iterable, Iterator, Sequence
from dataclasses import dataclass
from pathlib import Path

from sciera.corpus import journal
from sciera.corpus.chunker import Sentence, chunk_with_sentences
from sciera.corpus.fulltext.model import Reference
from sciera.corpus.sqlite_errors import connect as checked_connect
from sciera.corpus.sqlite_errors import integrity_problem
from sciera.corpus.transaction import (
    EMPTY_FINGERPRINT,
    PASSAGE_COLUMNS,
    REFERENCE_COLUMNS,
    SENTENCE_COLUMNS,
    DuplicateDocumentError,
    StoreTransaction,
)
from sciera.errors import ScieraError
from sciera.sqlite import retry_locked
from sciera.types import Document, Passage

__all__ = [
    "STORE_FILE",
    "DuplicateDocumentError",
    "PassagePlace",
    "PassageStore",
    "StoreTransaction",
]

STORE_FILE = "store.sqlite"
SCHEMA_VERSION = "3"
# schema 1: no sentences; 2: no sections or references (both upgraded by the first write)
_READABLE = ("1", "2", SCHEMA_VERSION)

_SCHEMA = (
    """
CREATE TABLE IF NOT EXISTS meta (key TEXT PRIMARY KEY, value TEXT NOT NULL);
CREATE TABLE IF NOT EXISTS documents (
    doc_id TEXT PRIMARY KEY,
    title TEXT NOT NULL,
    text TEXT NOT NULL,
    metadata TEXT NOT NULL,
    content_hash TEXT NOT NULL,
    source TEXT NOT NULL,
    source_hash TEXT NOT NULL,
    record_no INTEGER NOT NULL,
    sentence_hash TEXT
);
CREATE TABLE IF NOT EXISTS passages (
    seq INTEGER PRIMARY KEY AUTOINCREMENT,
    passage_id TEXT NOT NULL UNIQUE,
    doc_id TEXT NOT NULL,
    idx INTEGER NOT NULL,
    title TEXT NOT NULL,
    text TEXT NOT NULL,
    section TEXT NOT NULL DEFAULT '',
    subsection TEXT NOT NULL DEFAULT '',
    kind TEXT NOT NULL DEFAULT 'text'
);
CREATE INDEX IF NOT EXISTS passages_by_doc ON passages (doc_id);
"""
    + journal.SCHEMA
)
_SENTENCES = """
CREATE TABLE IF NOT EXISTS sentences (
    doc_id TEXT NOT NULL,
    idx INTEGER NOT NULL,
    passage_id TEXT NOT NULL,
    text TEXT NOT NULL,
    PRIMARY KEY (doc_id, idx)
);
"""
_REFERENCES = """
CREATE TABLE IF NOT EXISTS doc_references (
    doc_id TEXT NOT NULL,
    idx INTEGER NOT NULL,
    label TEXT NOT NULL,
    text TEXT NOT NULL,
    title TEXT NOT NULL,
    authors TEXT NOT NULL,
    year TEXT NOT NULL,
    journal TEXT NOT NULL,
    doi TEXT NOT NULL,
    pmid TEXT NOT NULL,
    PRIMARY KEY (doc_id, idx)
);
"""
_SECTION_COLUMNS = (
    "ALTER TABLE passages ADD COLUMN section TEXT NOT NULL DEFAULT ''",
    "ALTER TABLE passages ADD COLUMN subsection TEXT NOT NULL DEFAULT ''",
    "ALTER TABLE passages ADD COLUMN kind TEXT NOT NULL DEFAULT 'text'",
)
_UPGRADES = {
    "1": (
        "ALTER TABLE documents ADD COLUMN sentence_hash TEXT",
        _SENTENCES,
        "UPDATE journal SET last_record = 0, complete = 0",
        "UPDATE meta SET value = '2' WHERE key = 'schema_version'",
    ),
    "2": (
        *_SECTION_COLUMNS,
        _REFERENCES,
        "UPDATE meta SET value = '3' WHERE key = 'schema_version'",
    ),
}


@dataclass(frozen=True, slots=True)
class PassagePlace:
    """Where a passage sits in its paper: top-level ``section``, ``subsection`` (headings
    below it joined by " > ") and ``kind`` (text, caption or table)."""

    section: str
    subsection: str
    kind: str


def _passage(row: tuple[str, str, int, str, str, str]) -> Passage:
    return Passage(
        passage_id=row[0], doc_id=row[1], index=row[2], title=row[3], text=row[4], section=row[5]
    )


class PassageStore:
    """Documents and passages of one corpus directory."""

    def __init__(self, path: Path) -> None:
        self.path = Path(path)
        self.path.parent.mkdir(parents=True, exist_ok=True)
        self._lock = threading.RLock()
        # a damaged file or a full disk: a one-line error naming the file, from any statement
        self._conn = checked_connect(
            self.path, isolation_level=None, check_same_thread=False, timeout=60
        )
        try:
            # a new file: another process may be creating the same store
            retry_locked(lambda: self._conn.execute("PRAGMA journal_mode=WAL"), timeout=60)
            self._conn.execute("PRAGMA synchronous=NORMAL")
        except ScieraError:
            self._conn.close()
            raise
        version = self._schema_version()
        if version is None:  # a new store; an existing one is opened without writing
            self._conn.executescript(_SCHEMA + _SENTENCES + _REFERENCES)
            self._conn.execute(
                "INSERT OR IGNORE INTO meta VALUES ('schema_version', ?), ('fingerprint', ?)",
                (SCHEMA_VERSION, EMPTY_FINGERPRINT),
            )
            version = self._schema_version()
        if version not in _READABLE:
            self._conn.close()
            raise ScieraError(f"{self.path}: store schema {version}, expected {SCHEMA_VERSION}")

    def check(self) -> None:
        """Raise a one-line ScieraError naming the file when SQLite's ``integrity_check``
        finds it damaged (ingest runs this before it writes)."""
        problem = integrity_problem(self._conn)
        if problem is not None:
            raise ScieraError(
                f"{self.path}: the file is damaged (integrity check: {problem}); restore it "
                "from a copy, or ingest again into a new corpus folder"
            )

    @classmethod
    def open(cls, corpus_dir: Path | str, create: bool = False) -> PassageStore:
        """The store of ``corpus_dir``; creates it only when ``create`` is true."""
        path = Path(corpus_dir) / STORE_FILE
        if not create and not path.is_file():
            raise ScieraError(
                f"no passage store at {path}; run `sciera ingest PATH --corpus {corpus_dir}` first"
            )
        return cls(path)

    # -- reading -----------------------------------------------------------------------
    def _schema_version(self) -> str | None:
        try:
            return self._meta("schema_version")
        except sqlite3.OperationalError:  # no meta table yet
            return None

    def _meta(self, key: str) -> str | None:
        row = self._conn.execute("SELECT value FROM meta WHERE key = ?", (key,)).fetchone()
        return None if row is None else row[0]

    def _scalar(self, sql: str) -> int:
        with self._lock:
            return int(self._conn.execute(sql).fetchone()[0])

    def _columns(self) -> str:
        """The passage columns :func:`_passage` reads (no section column before schema 3)."""
        if self._schema_version() == SCHEMA_VERSION:
            return f"{PASSAGE_COLUMNS}, section"
        return f"{PASSAGE_COLUMNS}, ''"

    def count_documents(self) -> int:
        return self._scalar("SELECT COUNT(*) FROM documents")

    def doc_ids(self) -> list[str]:
        """Every document id, sorted."""
        with self._lock:
            rows = self._conn.execute("SELECT doc_id FROM documents ORDER BY doc_id").fetchall()
        return [r[0] for r in rows]

    def count_passages(self) -> int:
        return self._scalar("SELECT COUNT(*) FROM passages")

    def count_sentences(self) -> int:
        """Sentences stored (0 for a store from before sentences were kept)."""
        if self.schema_version == "1":
            return 0
        return self._scalar("SELECT COUNT(*) FROM sentences")

    def fingerprint(self) -> str:
        """Changes whenever a passage is added, removed or changed (one row read)."""
        with self._lock:
            return self._meta("fingerprint") or EMPTY_FINGERPRINT

    def iter_passages(self, batch_size: int = 1000) -> Iterator[Passage]:
        """All passages in insertion order, fetched ``batch_size`` at a time."""
        last = -1
        while True:
            with self._lock:
                rows = self._conn.execute(
                    f"SELECT seq, {self._columns()} FROM passages WHERE seq > ? "
                    "ORDER BY seq LIMIT ?",
                    (last, batch_size),
                ).fetchall()
            if not rows:
                return
            last = rows[-1][0]
            for row in rows:
                yield _passage(row[1:])

    def _select_in(self, sql: str, ids: Sequence[str]) -> list[tuple]:
        """The rows of ``sql`` whose ``IN ({marks})`` takes the distinct ``ids``, asked in
        chunks of 500 (SQLite's bound on parameters), in chunk order."""
        unique = list(dict.fromkeys(ids))
        rows: list[tuple] = []
        with self._lock:
            for i in range(0, len(unique), 500):
                chunk = unique[i : i + 500]
                marks = ",".join("?" * len(chunk))
                rows += self._conn.execute(sql.format(marks=marks), chunk).fetchall()
        return rows

    def find_passages(self, ids: Sequence[str]) -> dict[str, Passage]:
        """The passages of ``ids`` the store has, by id (unknown ids are left out)."""
        sql = f"SELECT {self._columns()} FROM passages WHERE passage_id IN ({{marks}})"
        return {row[0]: _passage(row) for row in self._select_in(sql, ids)}

    def get_passages(self, ids: Sequence[str]) -> list[Passage]:
        """Passages in the order of ``ids``; an unknown id raises KeyError naming it."""
        found = self.find_passages(ids)
        for pid in ids:
            if pid not in found:
                raise KeyError(f"unknown passage id {pid!r}")
        return [found[pid] for pid in ids]

    def document_passages(self, doc_id: str) -> list[Passage]:
        """Every passage of ``doc_id`` in document order (none for an unknown id)."""
        with self._lock:
            rows = self._conn.execute(
                f"SELECT {self._columns()} FROM passages WHERE doc_id = ? ORDER BY idx", (doc_id,)
            ).fetchall()
        return [_passage(row) for row in rows]

    def get_document(self, doc_id: str) -> Document | None:
        with self._lock:
            row = self._conn.execute(
                "SELECT doc_id, title, text, metadata FROM documents WHERE doc_id = ?", (doc_id,)
            ).fetchone()
        if row is None:
            return None
        return Document(doc_id=row[0], title=row[1], text=row[2], metadata=self._metadata(row))

    def _metadata(self, row: tuple[str, str, str, object]) -> dict[str, object]:
        """A document's stored metadata; a value that is not a JSON object (bytes changed in
        a sound SQLite page, which no integrity check sees) is a one-line error."""
        try:
            value = json.loads(row[3])  # type: ignore[arg-type]
        except (TypeError, ValueError, RecursionError):
            value = None
        if not isinstance(value, dict):
            raise ScieraError(
                f"{self.path}: document {row[0]!r}: the stored metadata is not a JSON object "
                "(the file is damaged); restore it from a copy, or ingest again"
            )
        return value

    @property
    def schema_version(self) -> str:
        with self._lock:
            return self._schema_version() or SCHEMA_VERSION

    def _reingest_error(self, what: str) -> ScieraError:
        corpus = self.path.parent
        return ScieraError(
            f"{corpus}: {what} was ingested before sciera kept sentence boundaries; re-ingest "
            f"it (`sciera ingest PATH --corpus {corpus}`) to use verify (search and ask work)"
        )

    def sentence_rows(self, doc_ids: Sequence[str]) -> dict[str, list[Sentence]]:
        """Every sentence of each of ``doc_ids`` (in document order), by doc id; unknown ids
        are left out. Raises :class:`~sciera.errors.ScieraError` (re-ingest) for a store or
        document ingested before sentences were kept."""
        if self.schema_version == "1":
            raise self._reingest_error("this corpus")
        sql = f"SELECT {SENTENCE_COLUMNS} FROM sentences WHERE doc_id IN ({{marks}}) "
        with self._lock:  # the documents and their sentences read together
            docs = self._select_in(
                "SELECT doc_id, sentence_hash FROM documents WHERE doc_id IN ({marks})", doc_ids
            )
            missing = sorted(d for d, digest in docs if digest is None)
            if missing:
                raise self._reingest_error(f"document {missing[0]!r}")
            out: dict[str, list[Sentence]] = {d: [] for d, _ in docs}
            for row in self._select_in(sql + "ORDER BY doc_id, idx", list(out)):
                out[row[0]].append(Sentence(row[0], row[1], row[2], row[3]))
        return {d: out[d] for d in dict.fromkeys(doc_ids) if d in out}

    def sentences(self, doc_ids: Sequence[str]) -> dict[str, tuple[str, list[str]]]:
        """``{doc_id: (title, [sentence, ...])}`` for the known ``doc_ids``, in their order:
        a rationale ``(doc_id, i)`` is ``sentences[i]``, verbatim (see :meth:`sentence_rows`
        for the passage each falls in, and the errors)."""
        rows = self.sentence_rows(doc_ids)
        sql = "SELECT doc_id, title FROM documents WHERE doc_id IN ({marks})"
        titles = dict(self._select_in(sql, list(rows)))
        return {d: (titles[d], [s.text for s in sents]) for d, sents in rows.items()}

    def passage_places(self, ids: Sequence[str]) -> dict[str, PassagePlace]:
        """Section, subsection and kind of each known passage of ``ids`` (empty section
        for an abstract's passages and for any passage of a store from before schema 3)."""
        if self.schema_version != SCHEMA_VERSION:
            return {pid: PassagePlace("", "", "text") for pid in self.find_passages(ids)}
        sql = (
            "SELECT passage_id, section, subsection, kind FROM passages "
            "WHERE passage_id IN ({marks})"
        )
        return {r[0]: PassagePlace(r[1], r[2], r[3]) for r in self._select_in(sql, ids)}

    def outline(self, doc_id: str) -> list[tuple[PassagePlace, int]]:
        """A document's sections in reading order, each with its passage count: one row
        per run of passages with the same section, subsection and kind."""
        passages = self.document_passages(doc_id)
        places = self.passage_places([p.passage_id for p in passages])
        rows: list[tuple[PassagePlace, int]] = []
        for p in passages:
            place = places[p.passage_id]
            if rows and rows[-1][0] == place:
                rows[-1] = (place, rows[-1][1] + 1)
            else:
                rows.append((place, 1))
        return rows

    def references(self, doc_id: str) -> list[Reference]:
        """A paper's reference list (empty for an abstract or a store before schema 3)."""
        if self.schema_version != SCHEMA_VERSION:
            return []
        with self._lock:
            rows = self._conn.execute(
                f"SELECT {REFERENCE_COLUMNS} FROM doc_references WHERE doc_id = ? ORDER BY idx",
                (doc_id,),
            ).fetchall()
        return [
            Reference(r[2], r[3], r[4], tuple(json.loads(r[5])), r[6], r[7], r[8], r[9])
            for r in rows
        ]

    def sources(self) -> dict[str, list[tuple[str, str]]]:
        """``{source file: [(doc_id, source_hash), ...]}`` of documents read from a file."""
        with self._lock:
            rows = self._conn.execute(
                "SELECT source, doc_id, source_hash FROM documents WHERE source != '' "
                "ORDER BY source, doc_id"
            ).fetchall()
        out: dict[str, list[tuple[str, str]]] = {}
        for source, doc_id, digest in rows:
            out.setdefault(source, []).append((doc_id, digest))
        return out

    def journal_sources(self) -> list[str]:
        """Every source file the journal knows."""
        with self._lock:
            return [r[0] for r in self._conn.execute("SELECT source FROM journal ORDER BY source")]

    def journal_entry(self, source: str) -> journal.JournalEntry | None:
        with self._lock:
            return journal.read_entry(self._conn, source)

    # -- writing -----------------------------------------------------------------------
    def transaction(self) -> StoreTransaction:
        """Begin a write transaction (use as a context manager, or commit()/rollback());
        a schema-1 store is upgraded first (see the module docstring)."""
        self.upgrade()
        return StoreTransaction(self._conn, self._lock)

    def upgrade(self) -> None:
        """Bring an older store to the current schema (a no-op on a current store). From 1:
        the sentences table, and every journal entry rewound so that ingesting the same
        files again reads them and fills in their sentences. From 2: the passages' section
        columns (empty) and the references table."""
        with self._lock:
            if self._schema_version() == SCHEMA_VERSION:
                return
            self._conn.execute("BEGIN IMMEDIATE")
            try:
                # re-read inside the transaction: another process may have upgraded it
                while (version := self._schema_version()) in _UPGRADES:
                    for statement in _UPGRADES[version]:
                        self._conn.execute(statement)
                self._conn.execute("COMMIT")
            except BaseException:
                self._conn.execute("ROLLBACK")
                raise

    def add_documents(
        self,
        docs_and_passages: Iterable[Document | tuple[Document, Sequence[Passage]]],
        source: str,
    ) -> int:
        """Store documents with their passages, in one transaction.

        Items are ``(document, passages)`` pairs (sentences: each passage split on its own),
        or bare documents which are chunked with the default limit (250 words) and the
        sentence splitter. Returns how many documents were added or updated; documents
        whose content is unchanged are left as they are.
        """
        changed = 0
        with self.transaction() as tx:
            for item in docs_and_passages:
                if isinstance(item, Document):
                    passages, sentences = chunk_with_sentences(item)
                    changed += (
                        tx.put(item, passages, sentences=sentences, source=source) != "unchanged"
                    )
                else:
                    doc, passages = item
                    changed += tx.put(doc, passages, source=source) != "unchanged"
        return changed

    def close(self) -> None:
        with self._lock:
            self._conn.close()

    def __enter__(self) -> PassageStore:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()
