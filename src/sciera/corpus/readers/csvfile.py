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
from pathlib import Path
from typing import Any, ClassVar

from sciera.corpus.readers._fields import data_suffix, open_binary, optional_text
from sciera.corpus.readers.base import Fields, RecordReader
from sciera.corpus.readers.jsonl import JsonlReader
from sciera.errors import InputError
from sciera.types import Document


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

    def records(self, file: Path) -> Iterator[tuple[int, Any]]:
        with (
            open_binary(file) as raw,
            io.TextIOWrapper(raw, encoding="utf-8-sig", newline="") as text,
        ):
            rows = csv.reader(text, delimiter=self._delimiter(file))
            header: list[str] | None = None
            start = 1
            try:
                for row in rows:
                    if row:
                        if header is None:
                            header = self._check_header(file, row)
                        else:
                            yield start, (header, row)
                    start = rows.line_num + 1
            except csv.Error as exc:
                raise InputError(file, start, "record", f"unreadable CSV: {exc}") from exc
            except UnicodeDecodeError as exc:
                raise InputError(file, start, "record", f"not valid UTF-8 ({exc.reason})") from exc

    def _check_header(self, file: Path, header: list[str]) -> list[str]:
        header = [name.strip() for name in header]
        seen: set[str] = set()
        for name in header:
            if name in seen:
                raise InputError(file, 1, "header", f"duplicate column {name!r}")
            seen.add(name)
        for field in (self._fields.id_field, self._fields.text_field):
            if field not in seen:
                raise InputError(
                    file, 1, field, f"column missing from header (columns: {', '.join(header)})"
                )
        return header

    def parse(self, file: Path, record_no: int, raw: Any) -> Document:
        header, row = raw
        if len(row) != len(header):
            raise InputError(
                file, record_no, "record", f"expected {len(header)} columns, got {len(row)}"
            )
        record = dict(zip(header, row, strict=True))
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
