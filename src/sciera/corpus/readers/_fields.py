"""Shared helpers for readers: opening (gzipped) files and checking field values."""

from __future__ import annotations

import gzip
import json
from pathlib import Path
from typing import IO, Any

from sciera.errors import InputError


def open_binary(file: Path) -> IO[bytes]:
    """Open a file for reading bytes, decompressing ``.gz`` transparently."""
    if file.name.endswith(".gz"):
        return gzip.open(file, "rb")
    return open(file, "rb")


def data_suffix(file: Path) -> str:
    """The format suffix of a file name, ignoring a trailing ``.gz`` (``a.xml.gz`` -> ``.xml``)."""
    name = file.name.lower()
    if name.endswith(".gz"):
        name = name[:-3]
    dot = name.rfind(".")
    return name[dot:] if dot > 0 else ""


def _type_name(value: Any) -> str:
    return "null" if value is None else type(value).__name__


def json_object(file: Path, record_no: int, raw: bytes | str) -> dict[str, Any]:
    """Decode one JSON line into an object, or raise InputError on the record."""
    if isinstance(raw, bytes):
        try:
            raw = raw.decode("utf-8")
        except UnicodeDecodeError as exc:
            raise InputError(file, record_no, "record", f"not valid UTF-8 ({exc.reason})") from exc
    try:
        value = json.loads(raw.rstrip())  # no trailing newline: errors point into the line
    except json.JSONDecodeError as exc:
        raise InputError(
            file, record_no, "record", f"invalid JSON: {exc.msg} (column {exc.colno})"
        ) from exc
    if not isinstance(value, dict):
        raise InputError(file, record_no, "record", f"not a JSON object (got {_type_name(value)})")
    return value


def required_id(file: Path, record_no: int, record: dict[str, Any], field: str) -> str:
    """A non-empty document id; JSON integers are accepted and turned into strings."""
    value = record.get(field)
    if value is None:
        raise InputError(file, record_no, field, "missing")
    if isinstance(value, bool) or not isinstance(value, str | int):
        raise InputError(
            file, record_no, field, f"not a string or integer (got {_type_name(value)})"
        )
    value = str(value)
    if not value.strip():
        raise InputError(file, record_no, field, "empty")
    return value


def required_text(file: Path, record_no: int, record: dict[str, Any], field: str) -> str:
    """A string with at least one non-space character."""
    value = record.get(field)
    if value is None:
        raise InputError(file, record_no, field, "missing")
    if not isinstance(value, str):
        raise InputError(file, record_no, field, f"not a string (got {_type_name(value)})")
    if not value.strip():
        raise InputError(file, record_no, field, "empty")
    return value


def optional_text(file: Path, record_no: int, record: dict[str, Any], field: str) -> str:
    """A string that may be missing, null or empty (titles)."""
    value = record.get(field)
    if value is None:
        return ""
    if not isinstance(value, str):
        raise InputError(file, record_no, field, f"not a string (got {_type_name(value)})")
    return value
