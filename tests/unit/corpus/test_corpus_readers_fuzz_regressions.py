"""Failures the reader fuzz tests found, each as the minimal example Hypothesis shrank it to.

Every case was an exception other than a one-line ``InputError`` (or a good record lost
or a bad one accepted) before its fix; see docs/robustness.md for the table.
"""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from sciera.corpus import PassageStore, ingest
from sciera.corpus.readers import detect_format, get_reader
from sciera.errors import InputError


def read(fmt: str, file: Path) -> list:
    reader = get_reader(fmt)
    return [doc for _, doc in reader.read(file)]


def one_line(err: InputError, file: Path, record: int | None, field: str) -> None:
    assert "\n" not in str(err)
    assert (err.path, err.line, err.field) == (str(file), record, field), str(err)


def test_a_gz_file_that_is_not_gzip_is_an_input_error(tmp_path: Path) -> None:
    # shrunk: b"\x00" written to docs.jsonl.gz raised gzip.BadGzipFile
    file = tmp_path / "docs.jsonl.gz"
    file.write_bytes(b"\x00")
    with pytest.raises(InputError, match="not a readable gzip stream") as caught:
        read("jsonl", file)
    one_line(caught.value, file, None, "gzip")


def test_a_truncated_gz_file_keeps_the_records_before_the_damage(tmp_path: Path) -> None:
    import gzip

    good = b"".join(
        json.dumps({"id": f"d{i}", "text": f"Text {i}."}).encode() + b"\n" for i in range(400)
    )
    file = tmp_path / "docs.jsonl.gz"
    packed = gzip.compress(good)
    file.write_bytes(packed[: len(packed) - 20])
    with pytest.raises(InputError, match="gzip"):
        ingest(file, tmp_path / "c", max_words=50)
    with PassageStore.open(tmp_path / "c") as store:
        assert 0 < store.count_documents() < 400  # what was read before the damage is kept


@pytest.mark.parametrize(
    ("line", "problem"),
    [
        # shrunk: 4301 digits raised ValueError (int_max_str_digits) from json.loads
        (b'{"id": ' + b"7" * 4301 + b"}", "too long to read"),
        # shrunk: 3000 nested arrays raised RecursionError from json.loads
        (b"[" * 3000 + b"]" * 3000, "nested too deeply"),
    ],
)
def test_json_beyond_the_parser_limits_is_an_input_error(
    tmp_path: Path, line: bytes, problem: str
) -> None:
    file = tmp_path / "docs.jsonl"
    file.write_bytes(line + b"\n")
    for fmt in ("jsonl", "beir", "scifact-sentences", "openalex"):
        with pytest.raises(InputError, match=problem) as caught:
            read(fmt, file)
        one_line(caught.value, file, 1, "record")


def test_a_json_file_nested_too_deeply_is_an_input_error(tmp_path: Path) -> None:
    file = tmp_path / "works.json"
    file.write_bytes(b"[" * 3000 + b"]" * 3000)
    with pytest.raises(InputError, match="nested too deeply"):
        read("openalex", file)


def test_format_detection_survives_a_first_line_it_cannot_parse(tmp_path: Path) -> None:
    # found beside the fuzz tests: detect_format raised RecursionError / ValueError
    for line in (b"[" * 3000 + b"]" * 3000, b'{"id": ' + b"7" * 4301 + b"}"):
        file = tmp_path / "docs.jsonl"
        file.write_bytes(line + b"\n")
        assert detect_format(file) == "jsonl"


@pytest.mark.parametrize("depth", [900, 980, 990, 1000, 1100])
def test_deep_metadata_is_stored_or_skipped_never_a_crash(tmp_path: Path, depth: int) -> None:
    file = tmp_path / "docs.jsonl"
    nested = "[" * depth + "]" * depth
    file.write_text(
        f'{{"id": "deep", "text": "Deep.", "m": {nested}}}\n{{"id": "next", "text": "Next."}}\n'
    )
    report = ingest(file, tmp_path / "c", max_words=50, skip_bad=True)
    assert report.added + report.skipped == 2 and report.added >= 1
    with PassageStore.open(tmp_path / "c") as store:
        assert "next" in store.doc_ids()


@pytest.mark.parametrize(
    ("line", "field"),
    [
        # shrunk: a lone surrogate (valid JSON escape, not Unicode) was accepted, then
        # could not be stored as UTF-8
        ('{"id": "a", "text": "x\\ud800y"}', "text"),
        ('{"id": "a", "text": "ok", "meta": {"k": ["\\udfff"]}}', "meta.k[0]"),
        ('{"id": "\\ud800", "text": "ok"}', "id"),
    ],
)
def test_a_lone_surrogate_names_its_field(tmp_path: Path, line: str, field: str) -> None:
    file = tmp_path / "docs.jsonl"
    file.write_text(line + "\n", encoding="utf-8")
    with pytest.raises(InputError, match="lone surrogate") as caught:
        read("jsonl", file)
    one_line(caught.value, file, 1, field)


def test_a_csv_row_that_is_not_utf8_is_one_bad_record(tmp_path: Path) -> None:
    # shrunk: a row with b"caf\xe9" raised at line 1 (the decoder reads ahead) and with
    # --skip-bad every record after it was lost
    file = tmp_path / "docs.csv"
    file.write_bytes(b"id,text\r\n0,caf\xe9 latin-1\r\n1,good one\r\n")
    docs, errors = [], []
    reader = get_reader("csv")
    for record_no, raw in reader.records(file):
        try:
            docs.append(reader.parse(file, record_no, raw))
        except InputError as err:
            errors.append(err)
    assert [d.doc_id for d in docs] == ["1"]
    assert str(errors[0]).endswith("docs.csv:2: text: not valid UTF-8 (byte 0xe9)")
    report = ingest(file, tmp_path / "c", max_words=50, skip_bad=True)
    assert (report.added, report.skipped) == (1, 1)


def test_a_csv_field_over_the_size_limit_is_one_bad_record(tmp_path: Path) -> None:
    file = tmp_path / "docs.csv"
    big = "word " * 40_000  # 200 KB: over the csv module's 128 KiB field limit
    file.write_text(f"id,text\n0,{big}\n1,after the big one\n", encoding="utf-8")
    report = ingest(file, tmp_path / "c", max_words=50, skip_bad=True)
    assert (report.added, report.skipped) == (1, 1)
    with pytest.raises(InputError, match=r"docs.csv:2: record: unreadable CSV: field larger"):
        ingest(file, tmp_path / "strict", max_words=50)


def test_a_csv_header_with_a_newline_in_a_name_stays_one_line(tmp_path: Path) -> None:
    file = tmp_path / "docs.csv"
    file.write_text('"na\nme",text\n1,x\n', encoding="utf-8")
    with pytest.raises(InputError) as caught:
        read("csv", file)
    assert "\n" not in str(caught.value) and "(columns: na\\nme, text)" in str(caught.value)


def test_an_openalex_id_that_is_only_the_prefix_is_empty(tmp_path: Path) -> None:
    # shrunk: {"id": "https://openalex.org/", ...} became a document with id ""
    file = tmp_path / "works.jsonl"
    file.write_text(
        json.dumps({"id": "https://openalex.org/", "abstract_inverted_index": {"w": [0]}}) + "\n"
    )
    with pytest.raises(InputError, match="empty after the prefix") as caught:
        read("openalex", file)
    one_line(caught.value, file, 1, "id")


def test_a_10_mb_line_is_read(tmp_path: Path) -> None:
    file = tmp_path / "docs.jsonl"
    text = "Long abstract sentence here. " * 360_000  # about 10 MB
    file.write_text(json.dumps({"id": "big", "text": text}) + "\n")
    (doc,) = read("jsonl", file)
    assert len(doc.text) == len(text) > 10_000_000


def test_nul_bytes_are_kept_in_text(tmp_path: Path) -> None:
    file = tmp_path / "docs.jsonl"
    file.write_text(json.dumps({"id": "n\x00ul", "text": "A\x00B sentence. Another one."}) + "\n")
    ingest(file, tmp_path / "c", max_words=50)
    with PassageStore.open(tmp_path / "c") as store:
        doc = store.get_document("n\x00ul")
    assert doc is not None and doc.text == "A\x00B sentence. Another one."
