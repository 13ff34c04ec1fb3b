"""Append-only, fsync'd JSONL logs of per-query results: the runner's resume points.

A record is one JSON line written with a single ``write`` then ``flush`` + ``fsync``;
a run killed mid-write leaves at most one partial trailing line, which
:meth:`QueryLog.open` cuts off before appending again. A query is done exactly
when its line is in the log, so a restarted run skips it and never writes it twice.

A results folder that is committed is packed (``sciera eval pack``): its logs
and per-query rows are gzipped to ``<name>.gz``. Every reader goes through
:func:`stored` / :func:`open_text` / :func:`read_text`, which take the plain name and
read whichever of ``name`` and ``name.gz`` is there; before appending to a log whose
content is packed, :func:`unpack_for_append` writes it back to the plain file (the log
goes on in one file, nothing logged is lost). New runs always write plain files.
"""

from __future__ import annotations

import gzip
import json
import os
from collections.abc import Mapping
from pathlib import Path
from typing import IO, Any

from sciera.errors import InputError, ScieraError

GZ = ".gz"


def gz_path(path: str | Path) -> Path:
    """``path`` with ``.gz`` appended (``results.jsonl`` -> ``results.jsonl.gz``)."""
    return Path(f"{path}{GZ}")


def stored(path: str | Path) -> Path:
    """Where the content of ``path`` is: ``path`` itself, else ``path.gz`` when only that
    exists, else ``path`` (so a reader's "no such file" names the plain name). A name
    that already ends in ``.gz`` is taken as it is. Both there is an error: one of them
    is stale."""
    path = Path(path)
    if path.name.endswith(GZ):
        return path
    packed = gz_path(path)
    if packed.exists():
        if path.exists():
            raise ScieraError(
                f"{path}: both it and {packed.name} exist; remove the stale one "
                "(`gunzip -f` keeps the packed content)"
            )
        return packed
    return path


def _is_gz(path: Path) -> bool:
    return path.name.endswith(GZ)


def open_text(path: str | Path) -> IO[str]:
    """``path`` (or ``path.gz``, see :func:`stored`) opened for reading UTF-8 text."""
    where = stored(path)
    if _is_gz(where):
        return gzip.open(where, "rt", encoding="utf-8")
    return open(where, encoding="utf-8")


def read_bytes(path: str | Path) -> bytes:
    """The content of ``path`` or ``path.gz`` (decompressed)."""
    where = stored(path)
    data = where.read_bytes()
    return gzip.decompress(data) if _is_gz(where) else data


def read_text(path: str | Path) -> str:
    return read_bytes(path).decode("utf-8")


def is_stored(path: str | Path) -> bool:
    """``path`` or ``path.gz`` is a file."""
    return stored(path).is_file()


def _write_durably(path: Path, data: bytes) -> None:
    tmp = path.with_name(path.name + ".tmp")
    with open(tmp, "wb") as fh:
        fh.write(data)
        fh.flush()
        os.fsync(fh.fileno())
    tmp.replace(path)


def unpack_for_append(path: str | Path) -> Path:
    """Before appending to ``path``: when only ``path.gz`` is there (a packed results
    folder run again), write its content to ``path`` (durably, then remove the ``.gz``),
    so appending goes on in one plain file. Returns ``path``."""
    path = Path(path)
    where = stored(path)
    if where != path and where.exists():
        _write_durably(path, gzip.decompress(where.read_bytes()))
        where.unlink()
    return path


def pack(path: str | Path) -> Path:
    """Gzip ``path`` to ``path.gz`` and remove ``path``. The bytes are the same on every
    run (level 9, no file name, mtime 0), so re-packing an unchanged file changes nothing."""
    path = Path(path)
    out = gz_path(path)
    data = path.read_bytes()
    with open(out.with_name(out.name + ".tmp"), "wb") as raw:
        with gzip.GzipFile(filename="", mode="wb", compresslevel=9, fileobj=raw, mtime=0) as gz:
            gz.write(data)
        raw.flush()
        os.fsync(raw.fileno())
    out.with_name(out.name + ".tmp").replace(out)
    if gzip.decompress(out.read_bytes()) != data:  # never remove what was not kept
        raise ScieraError(f"{out}: gzip does not read back as {path.name}; kept both")
    path.unlink()
    return out


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
        """The log at ``path``; a packed one (``path.gz`` only) is first written back to
        ``path`` (:func:`unpack_for_append`), so a packed results folder resumes."""
        path = Path(path)
        path.parent.mkdir(parents=True, exist_ok=True)
        unpack_for_append(path)
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
    """Records by ``key``, from ``path`` or ``path.gz``. A partial last line (no newline)
    is ignored, or cut off with ``repair`` (of a plain file).

    Anything else that is not a JSON object, or a key seen twice, is an InputError.
    """
    path = stored(path)
    if not path.exists():
        return {}
    data = read_bytes(path)
    end = data.rfind(b"\n") + 1
    if repair and end < len(data) and not _is_gz(path):
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
