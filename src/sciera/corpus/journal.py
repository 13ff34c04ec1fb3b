"""The ingest journal: per source file, how far the last run committed.

One row per data file (its resolved path) with the file's size, mtime and
sha256, the ingest parameters, the last committed record number and whether
the file was read to the end. Rows are written in the same transaction as the
passages they account for, so after a crash the journal never claims more than
the store holds.
"""

from __future__ import annotations

import hashlib
import json
import sqlite3
from dataclasses import dataclass
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

SCHEMA = """
CREATE TABLE IF NOT EXISTS journal (
    source TEXT PRIMARY KEY,
    size INTEGER NOT NULL,
    mtime_ns INTEGER NOT NULL,
    file_hash TEXT NOT NULL,
    params TEXT NOT NULL,
    last_record INTEGER NOT NULL,
    complete INTEGER NOT NULL,
    updated_at TEXT NOT NULL
);
"""


@dataclass(frozen=True, slots=True)
class JournalEntry:
    source: str
    size: int
    mtime_ns: int
    file_hash: str
    params: dict[str, Any]
    last_record: int
    complete: bool


def file_sha256(file: Path, block: int = 1 << 20) -> str:
    digest = hashlib.sha256()
    with open(file, "rb") as handle:
        while chunk := handle.read(block):
            digest.update(chunk)
    return digest.hexdigest()


def read_entry(conn: sqlite3.Connection, source: str) -> JournalEntry | None:
    row = conn.execute(
        "SELECT source, size, mtime_ns, file_hash, params, last_record, complete "
        "FROM journal WHERE source = ?",
        (source,),
    ).fetchone()
    if row is None:
        return None
    return JournalEntry(row[0], row[1], row[2], row[3], json.loads(row[4]), row[5], bool(row[6]))


def write_entry(conn: sqlite3.Connection, entry: JournalEntry) -> None:
    conn.execute(
        "INSERT OR REPLACE INTO journal "
        "(source, size, mtime_ns, file_hash, params, last_record, complete, updated_at) "
        "VALUES (?, ?, ?, ?, ?, ?, ?, ?)",
        (
            entry.source,
            entry.size,
            entry.mtime_ns,
            entry.file_hash,
            json.dumps(entry.params, sort_keys=True),
            entry.last_record,
            int(entry.complete),
            datetime.now(UTC).isoformat(timespec="seconds"),
        ),
    )
