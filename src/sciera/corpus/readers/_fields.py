"""Shared helpers for readers: opening (gzipped) files and checking field values."""

from __future__ import annotations

import gzip
import io
import json
import zlib
from pathlib import Path
from typing import IO, Any

from sciera.errors import InputError


class _CheckedGzip(io.RawIOBase):
    """A gzip stream whose decompression errors name the file (one-line InputError)."""

    def __init__(self, file: Path) -> None:
        self._file = file
        self._stream = gzip.open(file, "rb")  # noqa: SIM115 - closed by close()

    def readable(self) -> bool:
        return True

    def readinto(self, buffer: Any) -> int:
        try:
            return self._stream.readinto(buffer)
        except (OSError, EOFError, zlib.error) as exc:  # BadGzipFile is an OSError
            raise InputError(
                self._file, None, "gzip", f"not a readable gzip stream ({exc})"
            ) from exc

    def close(self) -> None:
        self._stream.close()
        super().close()


def open_binary(file: Path) -> IO[bytes]:
    """Open a file for reading bytes, decompressing ``.gz`` transparently.

    A ``.gz`` file that is not gzip, or is truncated, raises :class:`InputError` (field
    ``gzip``) when read, after the records before the damage.
    """
    if file.name.endswith(".gz"):
        return io.BufferedReader(_CheckedGzip(file))
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
    value = json_value(file, record_no, raw.rstrip())  # no newline: errors point into the line
    if not isinstance(value, dict):
        raise InputError(file, record_no, "record", f"not a JSON object (got {_type_name(value)})")
    check_unicode(file, record_no, value)
    return value


def json_value(file: Path, record_no: int | None, text: str | bytes) -> Any:
    """``json.loads(text)``, every failure an InputError on the record.

    Besides syntax errors these are nesting deeper than the parser's recursion limit and
    integers longer than Python converts (4300 digits): both valid JSON, neither a record.
    """
    try:
        return json.loads(text)
    except json.JSONDecodeError as exc:
        line = record_no if record_no is not None else exc.lineno
        raise InputError(
            file, line, "record", f"invalid JSON: {exc.msg} (column {exc.colno})"
        ) from exc
    except UnicodeDecodeError as exc:
        raise InputError(file, record_no, "record", f"not valid UTF-8 ({exc.reason})") from exc
    except RecursionError as exc:
        raise InputError(file, record_no, "record", "JSON nested too deeply to read") from exc
    except ValueError as exc:  # int_max_str_digits
        raise InputError(
            file, record_no, "record", "a JSON number too long to read (over 4300 digits)"
        ) from exc


def check_unicode(file: Path, record_no: int, record: dict[str, Any]) -> None:
    """Raise InputError naming the field of the first string (or key) that is not valid
    Unicode: a lone surrogate, which JSON's ``\\ud800`` escapes can spell but UTF-8
    cannot store. Walks the record iteratively (any depth json.loads returned)."""
    stack: list[tuple[str, Any]] = [(key, value) for key, value in reversed(record.items())]
    for key in record:
        _check_string(file, record_no, key, key)
    while stack:
        path, value = stack.pop()
        if isinstance(value, str):
            _check_string(file, record_no, path, value)
        elif isinstance(value, dict):
            for key in value:
                _check_string(file, record_no, f"{path}.{key}", key)
            stack.extend((f"{path}.{k}", v) for k, v in reversed(value.items()))
        elif isinstance(value, list):
            stack.extend((f"{path}[{i}]", v) for i, v in reversed(list(enumerate(value))))


def _check_string(file: Path, record_no: int, field: str, value: str) -> None:
    try:
        value.encode("utf-8")
    except UnicodeEncodeError as exc:
        bad = value[exc.start]
        raise InputError(
            file,
            record_no,
            field_label(field),
            f"not valid Unicode (lone surrogate \\u{ord(bad):04x} at character {exc.start})",
        ) from None


def field_label(name: str) -> str:
    """A field or column name fit for a one-line message (control characters escaped)."""
    if name.isprintable() and len(name) <= 80:
        return name
    return repr(name[:80])[1:-1] + ("..." if len(name) > 80 else "")


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
