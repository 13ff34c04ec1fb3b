"""Every corpus reader against generated files (Hypothesis).

* Arbitrary bytes (raw and gzipped) under each format's file names give documents or a
  one-line :class:`ScieraError` naming the file, never another exception.
* Records that are almost right (``reader_strategies``): each good one becomes a
  document, each bad one a one-line :class:`InputError` naming file, record and field.
* ``ingest(..., skip_bad=True)`` of good and bad records mixed stores every good record
  and no bad one, and ingesting the same file again adds nothing.
* The CLI prints such errors on one line (no traceback).

Example counts are bounded so the module runs in seconds; each test has a ``_nightly``
twin (``fuzz_tiers.tiered``) with many more random examples: ``pytest -m nightly``.
"""

from __future__ import annotations

import gzip
import sys
from pathlib import Path
from typing import Any

import pytest
from hypothesis import strategies as st
from reader_strategies import BYTE_FILES, ID_KEYS, WRITERS, bad_records, good_records

from fuzz_tiers import tiered
from sciera.corpus import PassageStore, ingest
from sciera.corpus.readers import READERS, detect_format, get_reader
from sciera.errors import InputError, ScieraError
from sciera.types import Document

FORMATS = sorted(WRITERS)


def read_each(fmt: str, file: Path) -> tuple[list[Document], list[ScieraError]]:
    """Every record parsed on its own (as ``--skip-bad`` does); errors collected."""
    reader = get_reader(fmt)
    docs: list[Document] = []
    errors: list[ScieraError] = []
    try:
        for record_no, raw in reader.records(reader.source_file(file)):
            try:
                docs.append(reader.parse(file, record_no, raw))
            except InputError as err:
                errors.append(err)
    except ScieraError as err:  # a file-level problem
        errors.append(err)
    return docs, errors


def assert_one_line(err: ScieraError, file: Path) -> None:
    message = str(err)
    assert message and "\n" not in message and "\r" not in message, repr(message)
    assert str(file) in message, message
    if isinstance(err, InputError):
        assert err.path == str(file) and err.field, message
        assert message.startswith(f"{file}"), message


def assert_document(doc: Document) -> None:
    assert isinstance(doc.doc_id, str) and doc.doc_id.strip()
    assert isinstance(doc.title, str) and isinstance(doc.text, str)
    assert doc.text.strip() or doc.title.strip()


@tiered(default=40, nightly=2000, data=st.binary(max_size=600), compress=st.booleans())
@pytest.mark.parametrize(
    ("fmt", "name"), [(fmt, name) for fmt, names in BYTE_FILES.items() for name in names]
)
def test_arbitrary_bytes_give_documents_or_one_line_errors(
    tmp_path: Path, fmt: str, name: str, data: bytes, compress: bool
) -> None:
    file = tmp_path / name
    file.write_bytes(gzip.compress(data) if compress and name.endswith(".gz") else data)
    docs, errors = read_each(fmt, file)
    for doc in docs:
        assert_document(doc)
    for err in errors:
        assert_one_line(err, file)
    try:
        assert detect_format(file) in READERS
    except ScieraError as err:
        assert_one_line(err, file)


def unique(fmt: str, i: int, record: dict[str, Any]) -> tuple[dict[str, Any], str]:
    """The record with an id no other generated record has, and the doc_id it is stored as."""
    key = ID_KEYS[fmt]
    record = {**record, key: f"{record[key]}-{i}"}
    doc_id = record[key]
    if fmt == "openalex":
        doc_id = doc_id.removeprefix("https://openalex.org/")
    if fmt == "pubmed":
        doc_id = " ".join(doc_id.split())
    return record, doc_id


def mixed(fmt: str) -> st.SearchStrategy[list[tuple[bool, Any]]]:
    one = st.tuples(st.just(True), good_records(fmt)) | st.tuples(st.just(False), bad_records(fmt))
    return st.lists(one, min_size=1, max_size=8)


def build(fmt: str, rows: list[tuple[bool, Any]]) -> tuple[list[Any], list[str], int]:
    records, good_ids, bad = [], [], 0
    for i, (is_good, record) in enumerate(rows):
        if is_good:
            record, doc_id = unique(fmt, i, record)
            good_ids.append(doc_id)
        else:
            bad += 1
        records.append(record)
    return records, good_ids, bad


def stored_ids(corpus: Path) -> set[str]:
    with PassageStore.open(corpus) as store:
        return set(store.doc_ids())


@tiered(default=40, nightly=1000, data=st.data())
@pytest.mark.parametrize("fmt", FORMATS)
def test_each_record_is_a_document_or_names_its_field(
    tmp_path: Path, fmt: str, data: st.DataObject
) -> None:
    rows = data.draw(mixed(fmt))
    records, good_ids, bad = build(fmt, rows)
    name, write = WRITERS[fmt]
    file = write(tmp_path / name, records)
    docs, errors = read_each(fmt, file)
    for err in errors:
        assert_one_line(err, file)
    assert [d.doc_id for d in docs] == good_ids
    assert len(errors) == bad
    for doc in docs:
        assert_document(doc)


@tiered(default=12, nightly=300, data=st.data())
@pytest.mark.parametrize("fmt", FORMATS)
def test_skip_bad_keeps_every_good_record_and_reingest_adds_nothing(
    tmp_path_factory: pytest.TempPathFactory, fmt: str, data: st.DataObject
) -> None:
    tmp = tmp_path_factory.mktemp("fuzz")
    records, good_ids, bad = build(fmt, data.draw(mixed(fmt)))
    name, write = WRITERS[fmt]
    file = write(tmp / name, records)
    corpus = tmp / "corpus"
    report = ingest(file, corpus, format=fmt, skip_bad=True, max_words=40)
    assert stored_ids(corpus) == set(good_ids)
    assert (report.added, report.skipped) == (len(good_ids), bad)
    with PassageStore.open(corpus) as store:
        fingerprint = store.fingerprint()
    again = ingest(file, corpus, format=fmt, skip_bad=True, max_words=40)
    assert (again.added, again.updated, again.records) == (0, 0, 0)
    copy = write(tmp / f"copy-{name}", records)  # the same records from another file
    third = ingest(copy, corpus, format=fmt, skip_bad=True, max_words=40)
    assert (third.added, third.updated, third.unchanged) == (0, 0, len(good_ids))
    with PassageStore.open(corpus) as store:
        assert store.fingerprint() == fingerprint
    if bad:  # without --skip-bad: the first bad record stops the run, on one line
        with pytest.raises(InputError) as caught:
            ingest(file, tmp / "strict", format=fmt, max_words=40)
        assert_one_line(caught.value, file.resolve())


@tiered(default=3, nightly=50, data=st.data())
@pytest.mark.parametrize("fmt", FORMATS)
def test_cli_prints_one_line_for_a_bad_record(
    tmp_path_factory: pytest.TempPathFactory,
    capsys: pytest.CaptureFixture[str],
    fmt: str,
    data: st.DataObject,
) -> None:
    from sciera.cli import main

    tmp = tmp_path_factory.mktemp("cli")
    name, write = WRITERS[fmt]
    file = write(tmp / name, [data.draw(bad_records(fmt))])
    argv = ["sciera", "ingest", str(file), "--corpus", str(tmp / "c"), "--format", fmt]
    capsys.readouterr()
    with pytest.MonkeyPatch.context() as patch, pytest.raises(SystemExit) as exited:
        patch.setattr(sys, "argv", argv)
        main()
    err = capsys.readouterr().err
    assert exited.value.code == 2
    lines = [line for line in err.splitlines() if line.strip()]
    assert len(lines) == 1 and lines[0].startswith(f"error: {file.resolve()}:"), err
    assert "Traceback" not in err
