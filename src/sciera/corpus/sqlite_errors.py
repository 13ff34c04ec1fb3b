"""SQLite failures that mean the file, not the code, is wrong, as one-line errors naming it.

A store file that was truncated, overwritten or is not a database at all makes SQLite raise
``database disk image is malformed`` or ``file is not a database`` from whichever statement
first touches the damaged page; a full disk raises ``database or disk is full``. Opening a
connection with ``factory=CheckedConnection`` (and :func:`bind` with the file) turns those,
from every ``execute`` and every fetch, into a :class:`~sciera.errors.ScieraError` naming the
file and what to do. :func:`integrity_problem` runs ``PRAGMA integrity_check`` before a write.
"""

from __future__ import annotations

import sqlite3
from collections.abc import Callable, Iterable
from pathlib import Path
from typing import Any, TypeVar

from sciera.errors import ScieraError

T = TypeVar("T")
_READONLY, _IOERR, _CORRUPT, _FULL, _NOTADB = 8, 10, 11, 13, 26
_DAMAGE_SIGNS = ("Could not decode to UTF-8", "unsupported file format", "malformed")


def as_error(path: Path, exc: sqlite3.Error | UnicodeDecodeError) -> ScieraError | None:
    """The one-line error for a damaged file or a full disk, or None for any other failure."""
    code = (getattr(exc, "sqlite_errorcode", 0) or 0) & 0xFF
    detail = " ".join(str(exc).split())
    if isinstance(exc, UnicodeDecodeError):  # a PRAGMA's text answer read from junk bytes
        code, detail = _CORRUPT, f"text that is not UTF-8: {exc.reason}"
    # Python's sqlite3 reports text that is not UTF-8 (overwritten bytes) as OperationalError;
    # a changed header byte gives SQLITE_ERROR "unsupported file format"
    garbled = any(sign in detail for sign in _DAMAGE_SIGNS)
    if code in (_CORRUPT, _NOTADB) or type(exc) is sqlite3.DatabaseError or garbled:
        return ScieraError(
            f"{path}: the file is damaged ({detail}; SQLite's integrity check fails); restore "
            "it from a copy, or ingest again into a new corpus folder"
        )
    if code == _FULL:
        return ScieraError(
            f"{path}: the disk is full ({detail}); free some space and run the command again "
            "(committed batches are kept)"
        )
    if code == _READONLY:  # file permissions, or a header byte that says "read-only format"
        return ScieraError(f"{path}: cannot write the file ({detail}); check its permissions")
    if code == _IOERR:
        return ScieraError(f"{path}: cannot read or write the file ({detail})")
    return None


def _checked(path: Path, call: Callable[[], T]) -> T:
    try:
        return call()
    except (sqlite3.Error, UnicodeDecodeError) as exc:
        error = as_error(path, exc)
        if error is None:
            raise
        raise error from exc


class CheckedCursor(sqlite3.Cursor):
    """A cursor whose statements and fetches raise :func:`as_error`'s errors."""

    path: Path = Path("?")

    def execute(self, sql: str, parameters: Any = (), /) -> CheckedCursor:
        return _checked(self.path, lambda: super(CheckedCursor, self).execute(sql, parameters))

    def executemany(self, sql: str, seq: Iterable[Any], /) -> CheckedCursor:
        return _checked(self.path, lambda: super(CheckedCursor, self).executemany(sql, seq))

    def fetchone(self) -> Any:
        return _checked(self.path, super().fetchone)

    def fetchmany(self, size: int | None = None) -> list[Any]:
        n = self.arraysize if size is None else size
        return _checked(self.path, lambda: super(CheckedCursor, self).fetchmany(n))

    def fetchall(self) -> list[Any]:
        return _checked(self.path, super().fetchall)

    def __next__(self) -> Any:
        return _checked(self.path, super().__next__)


class CheckedConnection(sqlite3.Connection):
    """``sqlite3.connect(path, factory=CheckedConnection)``, then :func:`bind`."""

    path: Path = Path("?")

    def cursor(self, factory: Any = None) -> CheckedCursor:  # type: ignore[override]
        cur = _checked(self.path, lambda: super(CheckedConnection, self).cursor(CheckedCursor))
        cur.path = self.path
        return cur

    def execute(self, sql: str, parameters: Any = (), /) -> CheckedCursor:  # type: ignore[override]
        return self.cursor().execute(sql, parameters)

    def executemany(self, sql: str, seq: Iterable[Any], /) -> CheckedCursor:  # type: ignore[override]
        return self.cursor().executemany(sql, seq)

    def executescript(self, script: str, /) -> sqlite3.Cursor:
        return _checked(self.path, lambda: super(CheckedConnection, self).executescript(script))


def connect(path: Path, **kwargs: Any) -> CheckedConnection:
    """``sqlite3.connect`` with checked statements; opening a damaged file raises too."""
    path = Path(path)
    conn = _checked(path, lambda: sqlite3.connect(path, factory=CheckedConnection, **kwargs))
    assert isinstance(conn, CheckedConnection)
    conn.path = path
    return conn


def integrity_problem(conn: sqlite3.Connection) -> str | None:
    """The first problem ``PRAGMA integrity_check`` reports, or None when the file is sound
    (``quick_check`` misses indexes that disagree with their table)."""
    rows = conn.execute("PRAGMA integrity_check(1)").fetchall()
    first = rows[0][0] if rows else "no answer"
    return None if first == "ok" else " ".join(str(first).split())
