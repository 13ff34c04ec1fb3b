"""Append-only, fsync'd JSONL logs of per-query results: the runner's resume points.

A record is one JSON line written with a single ``write`` then ``flush`` + ``fsync``;
a run killed mid-write leaves at most one partial trailing line, which
:meth:`QueryLog.open` cuts off before appending again. A query is done exactly
when its line is in the log, so a restarted run skips it and never writes it twice.
"""

from __future__ import annotations

import json
import os
from collections.abc import Mapping
from pathlib import Path
from typing import Any

from sciera.errors import InputError


class QueryLog:
    """``{record[key]: record}`` backed by ``path`` (``key`` is ``"qid"`` for the runner's
    per-question results); :meth:`append` makes a record durable."""

    def __init__(self, path: Path, records: dict[str, dict[str, Any]], key: str = "qid") -> None:
        self.path = path
        self.records = records
        self.key = key
        self._fh = open(path, "a", encoding="utf-8")  # noqa: SIM115 -- closed in close()

    @classmethod
    def open(cls, path: str | Path, key: str = "qid") -> QueryLog:
        path = Path(path)
        path.parent.mkdir(parents=True, exist_ok=True)
        return cls(path, read_log(path, repair=True, key=key), key)

    def __contains__(self, qid: str) -> bool:
        return qid in self.records

    def append(self, record: Mapping[str, Any]) -> None:
        qid = str(record[self.key])
        if qid in self.records:
            what = "query" if self.key == "qid" else self.key
            raise ValueError(f"{self.path}: {what} {qid!r} is already logged")
        line = json.dumps(record, ensure_ascii=False, separators=(",", ":")) + "\n"
        self._fh.write(line)
        self._fh.flush()
        os.fsync(self._fh.fileno())
        self.records[qid] = dict(record)

    def close(self) -> None:
        self._fh.close()

    def __enter__(self) -> QueryLog:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()


def read_log(path: str | Path, repair: bool = False, key: str = "qid") -> dict[str, dict[str, Any]]:
    """Records by ``key``. A partial last line (no newline) is ignored, or cut off with
    ``repair``.

    Anything else that is not a JSON object, or a key seen twice, is an InputError.
    """
    path = Path(path)
    if not path.exists():
        return {}
    data = path.read_bytes()
    end = data.rfind(b"\n") + 1
    if repair and end < len(data):
        with open(path, "r+b") as fh:
            fh.truncate(end)
            fh.flush()
            os.fsync(fh.fileno())
    records: dict[str, dict[str, Any]] = {}
    for line_no, raw in enumerate(data[:end].splitlines(), start=1):
        if not raw.strip():
            continue
        try:
            rec = json.loads(raw)
        except ValueError as exc:
            raise InputError(str(path), line_no, "record", f"invalid JSON: {exc}") from None
        if not isinstance(rec, dict) or key not in rec:
            raise InputError(str(path), line_no, key, f"record without a {key}")
        if str(rec[key]) in records:
            what = "query" if key == "qid" else key
            raise InputError(str(path), line_no, key, f"duplicate {what} {rec[key]!r}")
        records[str(rec[key])] = rec
    return records
