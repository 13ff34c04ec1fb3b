"""Generic CSV / TSV reader with a header row and configurable column names.

``.tsv`` files are tab separated, everything else comma separated (``.gz`` is
read too). Every column other than id, title and text goes into
``Document.metadata`` as a string, empty values included. Record numbers are
the line on which a record starts (the header is line 1), so quoted fields
that span lines still point at the right place.
"""

from __future__ import annotations

import csv
import io
from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import dataclass
from pathlib import Path
from typing import Any, ClassVar

from sciera.corpus.readers._fields import data_suffix, field_label, open_binary, optional_text
from sciera.corpus.readers.base import Fields, RecordReader
from sciera.corpus.readers.jsonl import JsonlReader
from sciera.errors import InputError
from sciera.types import Document


@dataclass(frozen=True, slots=True)
class _Unreadable:
    """A row the csv module could not read (e.g. a field over its size limit)."""

    problem: str


def _is_utf8(value: str) -> bool:
    """False when the value holds bytes that were not UTF-8 (decoded as lone surrogates)."""
    return not any("\udc80" <= c <= "\udcff" for c in value)


def _columns(header: list[str]) -> str:
    """A header's first 20 column names, for a message."""
    return "columns: " + ", ".join(field_label(name.strip()) for name in header[:20])


class CsvReader(RecordReader):
    name: ClassVar[str] = "csv"

    def __init__(self, fields: Fields | None = None, delimiter: str | None = None) -> None:
        # Same field defaults and value checks as the JSON-lines reader.
        self._fields = JsonlReader(fields)
        self.id_field = self._fields.id_field
        self.delimiter = delimiter

    def _delimiter(self, file: Path) -> str:
        if self.delimiter is not None:
            return self.delimiter
        return "\t" if data_suffix(file) == ".tsv" else ","

    @contextmanager
    def _rows(self, file: Path) -> Iterator[Any]:
        """A CSV reader over ``file``."""
        with (
            open_binary(file) as raw,
            # bytes that are not UTF-8 become lone surrogates, reported per record by parse
            io.TextIOWrapper(
                raw, encoding="utf-8-sig", errors="surrogateescape", newline=""
            ) as text,
        ):
            yield csv.reader(text, delimiter=self._delimiter(file))

    def records(self, file: Path) -> Iterator[tuple[int, Any]]:
        with self._rows(file) as rows:
            header: list[str] | None = None
            start = 1
            while True:
                try:
                    row = next(rows)
                except StopIteration:
                    return
                except csv.Error as exc:
                    if header is None:
                        raise InputError(file, start, "header", f"unreadable CSV: {exc}") from exc
                    # the reader drops the rest of the line and goes on at the next one
                    yield start, _Unreadable(str(exc))
                    if rows.line_num < start:  # nothing consumed: do not loop
                        return
                    start = rows.line_num + 1
                    continue
                if row:
                    if header is None:
                        header = self._check_header(file, row)
                    else:
                        yield start, (header, row)
                start = rows.line_num + 1

    def _check_header(self, file: Path, header: list[str]) -> list[str]:
        header = [name.strip() for name in header]
        seen: set[str] = set()
        for name in header:
            if not _is_utf8(name):
                raise InputError(file, 1, "header", f"not valid UTF-8: {field_label(name)!r}")
            if name in seen:
                raise InputError(file, 1, "header", f"duplicate column {field_label(name)!r}")
            seen.add(name)
        missing = self._missing(header)
        if missing:
            raise InputError(
                file, 1, missing[0], f"column missing from header ({_columns(header)})"
            )
        return header

    def _missing(self, header: list[str]) -> list[str]:
        """The required columns (id, text) a header does not name."""
        names = {name.strip() for name in header}
        return [f for f in (self._fields.id_field, self._fields.text_field) if f not in names]

    def not_documents(self, file: Path) -> str | None:
        """Why ``file`` is not a table of documents: its header names no id or no text
        column (a manifest, a table of results). None when it names both, and when the
        file is empty or its header unreadable (reading it reports that)."""
        try:
            with self._rows(file) as rows:
                header = next((row for row in rows if row), None)
        except (OSError, csv.Error, InputError):
            return None
        if header is None:
            return None
        missing = self._missing(header)
        if not missing:
            return None
        return f"its header has no {' or '.join(missing)} column ({_columns(header)})"

    def parse(self, file: Path, record_no: int, raw: Any) -> Document:
        if isinstance(raw, _Unreadable):
            raise InputError(file, record_no, "record", f"unreadable CSV: {raw.problem}")
        header, row = raw
        if len(row) != len(header):
            raise InputError(
                file, record_no, "record", f"expected {len(header)} columns, got {len(row)}"
            )
        record = dict(zip(header, row, strict=True))
        for name, value in record.items():
            if not _is_utf8(value):
                byte = next(ord(c) - 0xDC00 for c in value if "\udc80" <= c <= "\udcff")
                raise InputError(
                    file, record_no, field_label(name), f"not valid UTF-8 (byte 0x{byte:02x})"
                )
        fields = self._fields
        doc_id = record[fields.id_field]
        if not doc_id.strip():
            raise InputError(file, record_no, fields.id_field, "empty")
        text = record[fields.text_field]
        if not text.strip():
            raise InputError(file, record_no, fields.text_field, "empty")
        title = optional_text(file, record_no, record, fields.title_field)
        used = {fields.id_field, fields.title_field, fields.text_field}
        metadata = {key: value for key, value in record.items() if key not in used}
        return Document(doc_id=doc_id, title=title, text=text, metadata=metadata)
