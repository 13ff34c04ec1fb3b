"""Generic CSV / TSV reader."""

from __future__ import annotations

from pathlib import Path

import pytest

from sciera.corpus import Fields
from sciera.corpus.readers import CsvReader
from sciera.errors import InputError


def test_csv_keeps_every_other_column_including_empty_ones(tmp_path: Path) -> None:
    file = tmp_path / "docs.csv"
    file.write_text(
        "id,title,text,year,venue\nd1,Title one,Body one.,2001,\nd2,,Body two.,2002,Cell\n"
    )
    docs = list(CsvReader().read(file))
    assert [n for n, _ in docs] == [2, 3]
    first, second = docs[0][1], docs[1][1]
    assert (first.doc_id, first.title, first.text) == ("d1", "Title one", "Body one.")
    assert dict(first.metadata) == {"year": "2001", "venue": ""}
    assert second.title == ""
    assert dict(second.metadata) == {"year": "2002", "venue": "Cell"}


def test_record_numbers_are_start_lines_of_multiline_records(tmp_path: Path) -> None:
    file = tmp_path / "docs.csv"
    file.write_text('id,text\na,"line one\nline two"\n\nb,ok\nc,\n')
    reader = CsvReader()
    records = list(reader.records(file))
    assert [n for n, _ in records] == [2, 5, 6]
    assert reader.parse(file, *records[0]).text == "line one\nline two"
    with pytest.raises(InputError) as info:
        reader.parse(file, *records[2])
    assert str(info.value) == f"{file}:6: text: empty"


def test_tsv_with_custom_columns_and_bom(tmp_path: Path) -> None:
    file = tmp_path / "docs.tsv"
    file.write_text("\ufeffpmid\tabstract\theadline\n9\tSome, text.\tHead\n", encoding="utf-8")
    [(_, doc)] = list(CsvReader(Fields(id="pmid", title="headline", text="abstract")).read(file))
    assert (doc.doc_id, doc.title, doc.text) == ("9", "Head", "Some, text.")
    assert dict(doc.metadata) == {}


def test_missing_id_column_is_reported_on_the_header(tmp_path: Path) -> None:
    file = tmp_path / "docs.csv"
    file.write_text("doc,text\na,b\n")
    with pytest.raises(InputError) as info:
        list(CsvReader().read(file))
    assert str(info.value) == f"{file}:1: id: column missing from header (columns: doc, text)"


@pytest.mark.parametrize(
    ("body", "message"),
    [
        ("id,text\na,b\nc,d,e\n", ":3: record: expected 2 columns, got 3"),
        ("id,text\n ,b\n", ":2: id: empty"),
        ("id,text,text\na,b,c\n", ":1: header: duplicate column 'text'"),
    ],
)
def test_csv_errors(tmp_path: Path, body: str, message: str) -> None:
    file = tmp_path / "docs.csv"
    file.write_text(body)
    with pytest.raises(InputError) as info:
        list(CsvReader().read(file))
    assert str(info.value) == f"{file}{message}"
