"""OpenAlex works: a JSON array, an API page ``{"results": [...]}``, one work, or JSON lines.

The id is the work's ``id`` with the ``https://openalex.org/`` prefix removed
(``W2741809807``); the title is ``title`` or else ``display_name``; the text is
the abstract rebuilt from ``abstract_inverted_index`` ({word: [positions]}) by
position. All other fields are kept in the metadata (the full ``id`` URL
included). Records are 1-based array indexes, or line numbers for JSON lines
(``.jsonl``/``.ndjson``, optionally gzipped). A ``.json`` file is loaded whole.
"""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path
from typing import Any, ClassVar

from sciera.corpus.readers._fields import (
    check_unicode,
    data_suffix,
    json_object,
    json_value,
    open_binary,
    required_id,
)
from sciera.corpus.readers.base import Fields, RecordReader, reject_field_overrides
from sciera.corpus.readers.jsonl import iter_lines
from sciera.errors import InputError
from sciera.types import Document

_PREFIX = "https://openalex.org/"
_INDEX = "abstract_inverted_index"


def rebuild_abstract(inverted: dict[str, list[int]]) -> str:
    """Words placed at their positions and joined with single spaces."""
    at: dict[int, str] = {}
    for word, positions in inverted.items():
        for position in positions:
            at[position] = word
    return " ".join(at[p] for p in sorted(at))


def _valid_index(value: Any) -> bool:
    return isinstance(value, dict) and all(
        isinstance(word, str)
        and isinstance(positions, list)
        and all(isinstance(p, int) and not isinstance(p, bool) and p >= 0 for p in positions)
        for word, positions in value.items()
    )


class OpenAlexReader(RecordReader):
    name: ClassVar[str] = "openalex"

    def __init__(self, fields: Fields | None = None) -> None:
        reject_field_overrides(self.name, fields)

    def records(self, file: Path) -> Iterator[tuple[int, Any]]:
        if data_suffix(file) in (".jsonl", ".ndjson"):
            yield from iter_lines(file)
            return
        with open_binary(file) as handle:
            data = handle.read()
        try:
            value = json_value(file, None, data)
        except InputError as exc:
            if exc.problem.startswith("invalid JSON: Extra data"):  # JSON lines in a .json file
                yield from iter_lines(file)
                return
            raise
        if isinstance(value, dict) and isinstance(value.get("results"), list):
            value = value["results"]
        elif isinstance(value, dict) and "id" in value:
            value = [value]
        if not isinstance(value, list):
            raise InputError(
                file,
                None,
                "results",
                'expected a JSON array of works, a {"results": [...]} page or JSON lines',
            )
        yield from enumerate(value, start=1)

    def parse(self, file: Path, record_no: int, raw: Any) -> Document:
        if isinstance(raw, bytes):  # a JSON line
            work = json_object(file, record_no, raw)
        elif isinstance(raw, dict):
            check_unicode(file, record_no, raw)
            work = raw
        else:
            raise InputError(
                file, record_no, "record", f"not a JSON object (got {type(raw).__name__})"
            )
        work_id = required_id(file, record_no, work, "id")
        doc_id = work_id.removeprefix(_PREFIX)
        if not doc_id.strip():
            raise InputError(file, record_no, "id", f"empty after the prefix {_PREFIX}")
        title = work.get("title") or work.get("display_name") or ""
        if not isinstance(title, str):
            raise InputError(file, record_no, "title", f"not a string (got {type(title).__name__})")
        inverted = work.get(_INDEX)
        if inverted is None:
            raise InputError(file, record_no, _INDEX, "missing")
        if not _valid_index(inverted):
            raise InputError(file, record_no, _INDEX, "not a {word: [positions]} map")
        text = rebuild_abstract(inverted)
        if not text.strip():
            raise InputError(file, record_no, _INDEX, "empty")
        metadata = {k: v for k, v in work.items() if k not in ("title", _INDEX)}
        return Document(doc_id=doc_id, title=title, text=text, metadata=metadata)
