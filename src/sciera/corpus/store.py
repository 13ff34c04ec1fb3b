"""The passage store: documents and passages in one SQLite file (``DIR/store.sqlite``).

WAL mode, so readers (indexers, the server) see committed data while an
ingest writes. Documents keep their metadata (JSON) and a content hash over
title, text, metadata and the passages cut from them; passages keep
``passage_id``, ``doc_id``, ``idx``, ``title`` and ``text`` in insertion order.
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
from pathlib import Path

from sciera.corpus import journal
from sciera.corpus.chunker import chunk_document
from sciera.corpus.transaction import (
    EMPTY_FINGERPRINT,
    PASSAGE_COLUMNS,
    DuplicateDocumentError,
    StoreTransaction,
)
from sciera.errors import ScieraError
from sciera.types import Document, Passage

__all__ = ["STORE_FILE", "DuplicateDocumentError", "PassageStore", "StoreTransaction"]

STORE_FILE = "store.sqlite"
SCHEMA_VERSION = "1"

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
    record_no INTEGER NOT NULL
);
CREATE TABLE IF NOT EXISTS passages (
    seq INTEGER PRIMARY KEY AUTOINCREMENT,
    passage_id TEXT NOT NULL UNIQUE,
    doc_id TEXT NOT NULL,
    idx INTEGER NOT NULL,
    title TEXT NOT NULL,
    text TEXT NOT NULL
);
CREATE INDEX IF NOT EXISTS passages_by_doc ON passages (doc_id);
"""
    + journal.SCHEMA
)


def _passage(row: tuple[str, str, int, str, str]) -> Passage:
    return Passage(passage_id=row[0], doc_id=row[1], index=row[2], title=row[3], text=row[4])


class PassageStore:
    """Documents and passages of one corpus directory."""

    def __init__(self, path: Path) -> None:
        self.path = Path(path)
        self.path.parent.mkdir(parents=True, exist_ok=True)
        self._lock = threading.RLock()
        self._conn = sqlite3.connect(
            self.path, isolation_level=None, check_same_thread=False, timeout=60
        )
        self._conn.execute("PRAGMA journal_mode=WAL")
        self._conn.execute("PRAGMA synchronous=NORMAL")
        version = self._schema_version()
        if version is None:  # a new store; an existing one is opened without writing
            self._conn.executescript(_SCHEMA)
            self._conn.execute(
                "INSERT OR IGNORE INTO meta VALUES ('schema_version', ?), ('fingerprint', ?)",
                (SCHEMA_VERSION, EMPTY_FINGERPRINT),
            )
            version = self._schema_version()
        if version != SCHEMA_VERSION:
            self._conn.close()
            raise ScieraError(f"{self.path}: store schema {version}, expected {SCHEMA_VERSION}")

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

    def count_documents(self) -> int:
        return self._scalar("SELECT COUNT(*) FROM documents")

    def doc_ids(self) -> list[str]:
        """Every document id, sorted."""
        with self._lock:
            rows = self._conn.execute("SELECT doc_id FROM documents ORDER BY doc_id").fetchall()
        return [r[0] for r in rows]

    def count_passages(self) -> int:
        return self._scalar("SELECT COUNT(*) FROM passages")

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
                    f"SELECT seq, {PASSAGE_COLUMNS} FROM passages WHERE seq > ? "
                    "ORDER BY seq LIMIT ?",
                    (last, batch_size),
                ).fetchall()
            if not rows:
                return
            last = rows[-1][0]
            for row in rows:
                yield _passage(row[1:])

    def find_passages(self, ids: Sequence[str]) -> dict[str, Passage]:
        """The passages of ``ids`` the store has, by id (unknown ids are left out)."""
        found: dict[str, Passage] = {}
        unique = list(dict.fromkeys(ids))
        with self._lock:
            for i in range(0, len(unique), 500):
                chunk = unique[i : i + 500]
                marks = ",".join("?" * len(chunk))
                rows = self._conn.execute(
                    f"SELECT {PASSAGE_COLUMNS} FROM passages WHERE passage_id IN ({marks})", chunk
                ).fetchall()
                found.update((row[0], _passage(row)) for row in rows)
        return found

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
                f"SELECT {PASSAGE_COLUMNS} FROM passages WHERE doc_id = ? ORDER BY idx", (doc_id,)
            ).fetchall()
        return [_passage(row) for row in rows]

    def get_document(self, doc_id: str) -> Document | None:
        with self._lock:
            row = self._conn.execute(
                "SELECT doc_id, title, text, metadata FROM documents WHERE doc_id = ?", (doc_id,)
            ).fetchone()
        if row is None:
            return None
        return Document(doc_id=row[0], title=row[1], text=row[2], metadata=json.loads(row[3]))

    def journal_entry(self, source: str) -> journal.JournalEntry | None:
        with self._lock:
            return journal.read_entry(self._conn, source)

    # -- writing -----------------------------------------------------------------------
    def transaction(self) -> StoreTransaction:
        """Begin a write transaction (use as a context manager, or commit()/rollback())."""
        return StoreTransaction(self._conn, self._lock)

    def add_documents(
        self,
        docs_and_passages: Iterable[Document | tuple[Document, Sequence[Passage]]],
        source: str,
    ) -> int:
        """Store documents with their passages, in one transaction.

        Items are ``(document, passages)`` pairs, or bare documents which are chunked
        with the default limit (250 words). Returns how many documents were added or
        updated; documents whose content is unchanged are left as they are.
        """
        changed = 0
        with self.transaction() as tx:
            for item in docs_and_passages:
                if isinstance(item, Document):
                    doc, passages = item, chunk_document(item)
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
