"""Writes to the passage store: one :class:`StoreTransaction` per batch.

``put`` adds a document with its passages, sentences and (papers) passage sections and
references, replaces them when the content
hash changed, or does nothing when it did not; when only the sentence boundaries differ
(the same text read from SciFact's sentence-split corpus, or a store from before
sentences were kept) it replaces the sentences alone and still counts as unchanged.
``commit`` advances the store fingerprint (``meta.fingerprint``) in the same transaction
whenever a passage changed: new = blake2b(old + digest of the changes). Sentences do not
enter the fingerprint: no index reads them. ``delete`` removes a document with everything
it owns (``sciera corpus prune``).
"""

from __future__ import annotations

import hashlib
import json
import sqlite3
import threading
from collections.abc import Sequence
from types import TracebackType
from typing import Any, Literal

from sciera.corpus import journal
from sciera.corpus.chunker import Sentence, passage_sentences
from sciera.corpus.fulltext.model import Reference, Unit
from sciera.errors import ScieraError
from sciera.types import Document, Passage

PutResult = Literal["added", "updated", "unchanged"]
EMPTY_FINGERPRINT = hashlib.blake2b(b"sciera-store-v1", digest_size=16).hexdigest()
PASSAGE_COLUMNS = "passage_id, doc_id, idx, title, text"
SENTENCE_COLUMNS = "doc_id, idx, passage_id, text"
REFERENCE_COLUMNS = "doc_id, idx, label, text, title, authors, year, journal, doi, pmid"


class DuplicateDocumentError(ScieraError):
    """The same doc_id occurs at two records of one source file."""

    def __init__(self, doc_id: str, first_record: int) -> None:
        self.doc_id, self.first_record = doc_id, first_record
        super().__init__(f"duplicate document id {doc_id!r} (first at record {first_record})")


def content_hash(
    doc: Document, passages: Sequence[Passage], places: Sequence[Unit] | None = None
) -> str:
    payload: list[object] = [
        doc.title,
        doc.text,
        metadata_json(doc),
        [(p.passage_id, p.text) for p in passages],
    ]
    if places is not None:  # papers only: an abstract's hash is as it always was
        payload.append([(u.section, u.subsection, u.kind) for u in places])
    return hashlib.sha256(json.dumps(payload, ensure_ascii=False).encode()).hexdigest()


def sentence_hash(sentences: Sequence[Sentence]) -> str:
    payload = [(s.index, s.passage_id, s.text) for s in sentences]
    return hashlib.sha256(json.dumps(payload, ensure_ascii=False).encode()).hexdigest()


def _checked_sentences(
    doc: Document,
    passages: Sequence[Passage],
    sentences: Sequence[Sentence] | None,
    places: Sequence[Unit] | None,
) -> Sequence[Sentence]:
    """The document's sentences (split from its passages when not given), once the passages,
    sentences and places are checked to belong to it; a ValueError otherwise."""
    for p in passages:
        if p.doc_id != doc.doc_id:
            raise ValueError(f"passage {p.passage_id!r} does not belong to {doc.doc_id!r}")
    if sentences is None:
        sentences = passage_sentences(passages)
    _check_sentences(doc, passages, sentences)
    if places is not None and len(places) != len(passages):
        raise ValueError(f"{len(places)} places for {len(passages)} passages of {doc.doc_id!r}")
    return sentences


def _check_sentences(
    doc: Document, passages: Sequence[Passage], sentences: Sequence[Sentence]
) -> None:
    ids = {p.passage_id for p in passages}
    for i, s in enumerate(sentences):
        if s.doc_id != doc.doc_id or s.index != i or s.passage_id not in ids:
            raise ValueError(
                f"sentence {i} of {doc.doc_id!r} is numbered {s.index} in document "
                f"{s.doc_id!r}, passage {s.passage_id!r}: not one of this document's sentences"
            )


def metadata_json(doc: Document) -> str:
    try:
        return json.dumps(dict(doc.metadata), sort_keys=True, ensure_ascii=False)
    except TypeError as exc:
        raise ScieraError(
            f"document {doc.doc_id!r}: metadata is not JSON-serializable: {exc}"
        ) from exc


class StoreTransaction:
    """One write transaction on a :class:`PassageStore` (``BEGIN IMMEDIATE`` .. ``COMMIT``)."""

    def __init__(self, conn: sqlite3.Connection, lock: threading.RLock) -> None:
        self._conn, self._lock = conn, lock
        lock.acquire()
        try:
            conn.execute("BEGIN IMMEDIATE")
        except BaseException:
            lock.release()
            raise
        self._changes = hashlib.blake2b(digest_size=16)
        self._changed = False
        self._open = True
        self.sentences_rewritten = 0  # unchanged documents whose sentences were rewritten

    def put(
        self,
        doc: Document,
        passages: Sequence[Passage],
        *,
        sentences: Sequence[Sentence] | None = None,
        source: str = "",
        source_hash: str = "",
        record_no: int = 0,
        places: Sequence[Unit] | None = None,
        references: Sequence[Reference] = (),
    ) -> PutResult:
        """Add or replace one document with its passages and sentences; unchanged content
        is a no-op (changed sentence boundaries alone replace the sentences).

        ``places`` (papers) gives each passage's layout unit: its section, subsection and
        kind are stored with the passage; ``references`` are stored apart.

        ``sentences`` come from :func:`~sciera.corpus.chunker.chunk_with_sentences`; without
        them each passage's text is split on its own. With a ``source_hash``, the same
        doc_id at another record of the same file raises :class:`DuplicateDocumentError`.
        """
        sentences = _checked_sentences(doc, passages, sentences, places)
        row = self._conn.execute(
            "SELECT content_hash, source, source_hash, record_no, sentence_hash FROM documents "
            "WHERE doc_id = ?",
            (doc.doc_id,),
        ).fetchone()
        if row is not None and source_hash and row[2] == source_hash and row[3] != record_no:
            raise DuplicateDocumentError(doc.doc_id, row[3])
        new_hash = content_hash(doc, passages, places)
        new_sentence_hash = sentence_hash(sentences)
        if row is not None and row[0] == new_hash:
            self._keep_unchanged(
                doc.doc_id, row, sentences, new_sentence_hash, (source, source_hash, record_no)
            )
            return "unchanged"
        values = (
            doc.title,
            doc.text,
            metadata_json(doc),
            new_hash,
            source,
            source_hash,
            record_no,
        )
        result = self._write_document(doc.doc_id, values, added=row is None)
        self._write_passages(passages, places)
        self._write_sentences(doc.doc_id, sentences, new_sentence_hash)
        self._write_references(doc.doc_id, references)
        self._changes.update(f"{result}\0{doc.doc_id}\0{new_hash}\n".encode())
        self._changed = True
        return result

    def _keep_unchanged(
        self,
        doc_id: str,
        row: tuple[Any, ...],
        sentences: Sequence[Sentence],
        new_sentence_hash: str,
        provenance: tuple[str, str, int],
    ) -> None:
        """An unchanged document: rewrite its sentences if their boundaries changed, then
        its source, source_hash and record_no if they moved."""
        if row[4] != new_sentence_hash:
            self._write_sentences(doc_id, sentences, new_sentence_hash)
            self.sentences_rewritten += 1
        if (row[1], row[2], row[3]) != provenance:
            self._conn.execute(
                "UPDATE documents SET source = ?, source_hash = ?, record_no = ? WHERE doc_id = ?",
                (*provenance, doc_id),
            )

    def _write_document(self, doc_id: str, values: tuple[Any, ...], *, added: bool) -> PutResult:
        """Insert a new document's row, or drop a changed one's passages and update its row."""
        if added:
            self._conn.execute(
                "INSERT INTO documents (doc_id, title, text, metadata, content_hash, source, "
                "source_hash, record_no) VALUES (?, ?, ?, ?, ?, ?, ?, ?)",
                (doc_id, *values),
            )
            return "added"
        self._conn.execute("DELETE FROM passages WHERE doc_id = ?", (doc_id,))
        self._conn.execute(
            "UPDATE documents SET title = ?, text = ?, metadata = ?, content_hash = ?, "
            "source = ?, source_hash = ?, record_no = ? WHERE doc_id = ?",
            (*values, doc_id),
        )
        return "updated"

    def _write_passages(self, passages: Sequence[Passage], places: Sequence[Unit] | None) -> None:
        """Insert the passages, with each one's section, subsection and kind when placed."""
        rows = [(p.passage_id, p.doc_id, p.index, p.title, p.text) for p in passages]
        if places is None:
            self._conn.executemany(
                f"INSERT INTO passages ({PASSAGE_COLUMNS}) VALUES (?, ?, ?, ?, ?)", rows
            )
        else:
            self._conn.executemany(
                f"INSERT INTO passages ({PASSAGE_COLUMNS}, section, subsection, kind) "
                "VALUES (?, ?, ?, ?, ?, ?, ?, ?)",
                [(*r, u.section, u.subsection, u.kind) for r, u in zip(rows, places, strict=True)],
            )

    def _write_sentences(self, doc_id: str, sentences: Sequence[Sentence], digest: str) -> None:
        self._conn.execute("DELETE FROM sentences WHERE doc_id = ?", (doc_id,))
        self._conn.executemany(
            f"INSERT INTO sentences ({SENTENCE_COLUMNS}) VALUES (?, ?, ?, ?)",
            [(s.doc_id, s.index, s.passage_id, s.text) for s in sentences],
        )
        self._conn.execute(
            "UPDATE documents SET sentence_hash = ? WHERE doc_id = ?", (digest, doc_id)
        )

    def _write_references(self, doc_id: str, references: Sequence[Reference]) -> None:
        self._conn.execute("DELETE FROM doc_references WHERE doc_id = ?", (doc_id,))
        self._conn.executemany(
            f"INSERT INTO doc_references ({REFERENCE_COLUMNS}) VALUES ({', '.join('?' * 10)})",
            [
                (doc_id, i, r.label, r.text, r.title, json.dumps(list(r.authors)), r.year,
                 r.journal, r.doi, r.pmid)
                for i, r in enumerate(references)
            ],
        )  # fmt: skip

    def delete(self, doc_id: str) -> bool:
        """Remove a document with its passages, sentences and references; False when the
        store does not hold it."""
        gone = self._conn.execute("DELETE FROM documents WHERE doc_id = ?", (doc_id,)).rowcount
        if not gone:
            return False
        for table in ("passages", "sentences", "doc_references"):
            self._conn.execute(f"DELETE FROM {table} WHERE doc_id = ?", (doc_id,))
        self._changes.update(f"deleted\0{doc_id}\n".encode())
        self._changed = True
        return True

    def set_journal(self, entry: journal.JournalEntry) -> None:
        journal.write_entry(self._conn, entry)

    def drop_journal(self, source: str) -> None:
        """Forget a source file (it was removed)."""
        self._conn.execute("DELETE FROM journal WHERE source = ?", (source,))

    def commit(self) -> None:
        if not self._open:
            return
        try:
            if self._changed:
                row = self._conn.execute("SELECT value FROM meta WHERE key = 'fingerprint'")
                old = (row.fetchone() or [EMPTY_FINGERPRINT])[0]
                new = hashlib.blake2b(
                    old.encode() + self._changes.digest(), digest_size=16
                ).hexdigest()
                self._conn.execute("UPDATE meta SET value = ? WHERE key = 'fingerprint'", (new,))
            self._conn.execute("COMMIT")
        except BaseException:
            self.rollback()
            raise
        self._finish()

    def rollback(self) -> None:
        if not self._open:
            return
        try:
            # SQLite has already rolled back after some errors (a full disk, SQLITE_FULL):
            # a second ROLLBACK would raise and hide that error
            if self._conn.in_transaction:
                self._conn.execute("ROLLBACK")
        finally:
            self._finish()

    def _finish(self) -> None:
        self._open = False
        self._lock.release()

    def __enter__(self) -> StoreTransaction:
        return self

    def __exit__(
        self,
        exc_type: type[BaseException] | None,
        exc: BaseException | None,
        tb: TracebackType | None,
    ) -> None:
        if exc_type is None:
            self.commit()
        else:
            self.rollback()
