"""SQLite set-up that two processes can run at once on one new file.

Switching a new file to WAL and creating its tables take locks for which SQLite does not
always call the busy handler (it returns SQLITE_BUSY at once to avoid deadlocks), so two
processes opening a fresh store or cache together can see "database is locked" despite a
busy timeout. :func:`retry_locked` waits that out; the corpus store, the LLM cache and the
embedding cache open their files through it.
"""

from __future__ import annotations

import sqlite3
import time
from collections.abc import Callable


def retry_locked(step: Callable[[], None], timeout: float) -> None:
    """Run ``step``, retrying for up to ``timeout`` seconds while SQLite reports the file
    locked; any other error, or the lock outlasting the timeout, is raised."""
    deadline = time.monotonic() + timeout
    delay = 0.01
    while True:
        try:
            step()
            return
        except sqlite3.OperationalError as exc:
            if "locked" not in str(exc) or time.monotonic() >= deadline:
                raise
        time.sleep(delay)
        delay = min(delay * 2, 0.5)
