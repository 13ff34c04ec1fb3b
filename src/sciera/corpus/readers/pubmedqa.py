"""PubMedQA's PQA files as a corpus: ``{pmid: {"QUESTION", "CONTEXTS", "LABELS", ...}}``.

One document per PubMed id (the JSON object's key): its ``CONTEXTS`` (the abstract's
sections without its conclusion, as PubMedQA gives them) joined by one space, no title
(PubMedQA has none). ``LABELS`` (the sections' names), ``MESHES`` and ``YEAR`` are kept in
the metadata; the question and its answer (``QUESTION``, ``LONG_ANSWER``,
``final_decision``, ``reasoning_*``) never enter the corpus, so a question asked over it
cannot read its own answer. Records are numbered from 1 in file order. The schema is fixed
(no field overrides); a ``.json`` file is loaded whole.
"""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path
from typing import Any, ClassVar

from sciera.corpus.readers._fields import check_unicode, json_value, open_binary
from sciera.corpus.readers.base import Fields, RecordReader, reject_field_overrides
from sciera.errors import InputError
from sciera.types import Document

CONTEXTS = "CONTEXTS"
KEPT = ("LABELS", "MESHES", "YEAR")
SEPARATOR = " "


class PubmedqaReader(RecordReader):
    name: ClassVar[str] = "pubmedqa"

    def __init__(self, fields: Fields | None = None) -> None:
        reject_field_overrides(self.name, fields)

    def records(self, file: Path) -> Iterator[tuple[int, Any]]:
        with open_binary(file) as handle:
            value = json_value(file, None, handle.read())
        if not isinstance(value, dict):
            raise InputError(
                file, None, "record", "expected a JSON object of {pmid: question} (PubMedQA)"
            )
        yield from enumerate(value.items(), start=1)

    def parse(self, file: Path, record_no: int, raw: Any) -> Document:
        pmid, item = raw
        if not isinstance(item, dict):
            raise InputError(file, record_no, "record", f"{pmid}: not a JSON object")
        check_unicode(file, record_no, item)
        if not str(pmid).strip():
            raise InputError(file, record_no, "pmid", "empty")
        contexts = item.get(CONTEXTS)
        if not isinstance(contexts, list) or not contexts:
            raise InputError(file, record_no, CONTEXTS, "expected a non-empty list of passages")
        for i, text in enumerate(contexts):
            if not isinstance(text, str) or not text.strip():
                raise InputError(file, record_no, f"{CONTEXTS}[{i}]", "not a non-empty string")
        metadata = {k: item[k] for k in KEPT if k in item}
        return Document(str(pmid), "", SEPARATOR.join(c.strip() for c in contexts), metadata)
