"""Generic JSON-lines reader: one JSON object per line, configurable field names.

Every field other than the id, title and text fields is kept in
``Document.metadata`` (nothing is dropped). Record numbers are 1-based line
numbers; blank lines are skipped but still counted. ``.jsonl.gz`` is read too.
"""

from __future__ import annotations

import json
import logging
from collections.abc import Iterator
from contextlib import closing
from pathlib import Path
from typing import Any, ClassVar

from sciera.corpus.readers._fields import (
    field_label,
    json_object,
    open_binary,
    optional_text,
    required_id,
    required_text,
)
from sciera.corpus.readers.base import Fields, RecordReader
from sciera.errors import InputError
from sciera.types import Document

logger = logging.getLogger(__name__)


def iter_lines(file: Path) -> Iterator[tuple[int, bytes]]:
    """Non-blank lines of a (gzipped) file with their 1-based line numbers."""
    with open_binary(file) as handle:
        for line_no, line in enumerate(handle, start=1):
            if line.strip():
                yield line_no, line


class JsonlReader(RecordReader):
    name: ClassVar[str] = "jsonl"
    default_fields: ClassVar[Fields] = Fields(id="id", title="title", text="text")

    def __init__(self, fields: Fields | None = None) -> None:
        given = fields or Fields()
        default = self.default_fields
        self.id_field = given.id or default.id or "id"
        # BEIR-style files under another name carry "_id": taken when "id" is absent,
        # unless the user named the id field
        self._id_fallback = given.id is None and self.id_field == "id"
        self.title_field = given.title or default.title or "title"
        self.text_field = given.text or default.text or "text"

    def records(self, file: Path) -> Iterator[tuple[int, Any]]:
        return iter_lines(file)

    def parse(self, file: Path, record_no: int, raw: Any) -> Document:
        record = json_object(file, record_no, raw)
        return self.document(file, record_no, record)

    def not_documents(self, file: Path) -> str | None:
        """Why ``file`` holds no documents: its first record, a JSON object, has no id or
        no text field (qrels, results rows ...). None when it has both, and when the file is
        empty or its first line is not a JSON object (reading it reports that)."""
        try:
            with closing(iter_lines(file)) as lines:
                first = next(lines, None)
            record = json.loads(first[1]) if first is not None else None
        except (OSError, InputError, ValueError, RecursionError):
            return None
        if not isinstance(record, dict):
            return None
        missing = []
        if self.id_field not in record and not (self._id_fallback and "_id" in record):
            missing.append(self.id_field)
        if self.text_field not in record:
            missing.append(self.text_field)
        if not missing:
            return None
        fields = ", ".join(field_label(str(key)) for key in list(record)[:20])
        return f"its first record has no {' or '.join(missing)} field (fields: {fields})"

    def document(self, file: Path, record_no: int, record: dict[str, Any]) -> Document:
        if self._id_fallback and "id" not in record and "_id" in record:
            logger.warning("%s: no 'id' field; '_id' is used as the document id", file)
            self.id_field, self._id_fallback = "_id", False
        doc_id = required_id(file, record_no, record, self.id_field)
        title = optional_text(file, record_no, record, self.title_field)
        raw_text = record.get(self.text_field)
        if isinstance(raw_text, str) and not raw_text.strip() and not title.strip():
            raise InputError(
                file, record_no, self.text_field, "empty, and so is the title: nothing to index"
            )
        text = required_text(file, record_no, record, self.text_field)
        used = {self.id_field, self.title_field, self.text_field}
        metadata = self.metadata(file, record_no, record, used)
        return Document(doc_id=doc_id, title=title, text=text, metadata=metadata)

    def metadata(
        self, file: Path, record_no: int, record: dict[str, Any], used: set[str]
    ) -> dict[str, Any]:
        return {key: value for key, value in record.items() if key not in used}
