"""retry_locked: two processes setting up one new SQLite file wait for each other."""

import sqlite3

import pytest

from sciera.sqlite import retry_locked


def test_open_retries_while_another_process_sets_the_file_up() -> None:
    calls = []

    def step() -> None:
        calls.append(1)
        if len(calls) < 3:
            raise sqlite3.OperationalError("database is locked")

    retry_locked(step, timeout=5.0)
    assert len(calls) == 3


def test_open_gives_up_on_other_errors_and_after_the_timeout() -> None:
    def broken() -> None:
        raise sqlite3.OperationalError("disk I/O error")

    def locked() -> None:
        raise sqlite3.OperationalError("database is locked")

    with pytest.raises(sqlite3.OperationalError, match="disk I/O"):
        retry_locked(broken, timeout=5.0)
    with pytest.raises(sqlite3.OperationalError, match="locked"):
        retry_locked(locked, timeout=0.05)
