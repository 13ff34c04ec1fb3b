"""NFCorpus's own files (Boteva et al. 2016) as a corpus: a ``*.docs`` file of one
document a line, ``ID<TAB>text`` (no header, no title; NFCorpus gives the title and the
abstract lower-cased as one text). Records are numbered by line from 1. The schema is
fixed (no field overrides). Its queries and graded judgments are a dataset
(:mod:`sciera.datasets.nfcorpus`).
"""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path
from typing import Any, ClassVar

from sciera.corpus.readers._fields import open_binary
from sciera.corpus.readers.base import Fields, RecordReader, reject_field_overrides
from sciera.errors import InputError
from sciera.types import Document


class NfcorpusReader(RecordReader):
    name: ClassVar[str] = "nfcorpus"

    def __init__(self, fields: Fields | None = None) -> None:
        reject_field_overrides(self.name, fields)

    def records(self, file: Path) -> Iterator[tuple[int, Any]]:
        with open_binary(file) as handle:
            for number, line in enumerate(handle, start=1):
                if line.strip():
                    yield number, line

    def parse(self, file: Path, record_no: int, raw: Any) -> Document:
        try:
            line = raw.decode("utf-8").rstrip("\r\n")
        except UnicodeDecodeError:
            raise InputError(file, record_no, "record", "not UTF-8") from None
        doc_id, tab, text = line.partition("\t")
        if not tab:
            raise InputError(file, record_no, "record", "expected ID<TAB>text")
        if not doc_id.strip():
            raise InputError(file, record_no, "id", "empty")
        if not text.strip():
            raise InputError(file, record_no, "text", "empty")
        return Document(doc_id.strip(), "", text.strip())
