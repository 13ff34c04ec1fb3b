"""BEIR and generic JSON-lines readers, and the BEIR query / qrels loaders."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from sciera.corpus import Fields, get_reader, load_beir_qrels, load_beir_queries, load_qrels
from sciera.corpus.readers import BeirReader, JsonlReader
from sciera.errors import InputError


def write_lines(path: Path, rows: list[object | str]) -> Path:
    lines = [row if isinstance(row, str) else json.dumps(row) for row in rows]
    path.write_text("\n".join(lines) + "\n", encoding="utf-8")
    return path


def beir_dir(tmp_path: Path, rows: list[object | str]) -> Path:
    folder = tmp_path / "beir"
    folder.mkdir()
    write_lines(folder / "corpus.jsonl", rows)
    return folder


def test_beir_reads_fields_and_keeps_metadata(tmp_path: Path) -> None:
    folder = beir_dir(
        tmp_path,
        [
            {"_id": "d1", "title": "T1", "text": "Body one.", "metadata": {"year": 2001}},
            {"_id": 42, "title": "", "text": "Body two.", "extra": "kept"},
        ],
    )
    docs = list(BeirReader().read(folder))
    assert [n for n, _ in docs] == [1, 2]
    first, second = docs[0][1], docs[1][1]
    assert (first.doc_id, first.title, first.text) == ("d1", "T1", "Body one.")
    assert dict(first.metadata) == {"year": 2001}
    assert (second.doc_id, second.title) == ("42", "")  # integer ids become strings
    assert dict(second.metadata) == {"extra": "kept"}


def test_beir_missing_id_names_file_line_and_field(tmp_path: Path) -> None:
    rows: list[object | str] = [{"_id": str(i), "text": "x"} for i in range(1, 17)]
    rows.append({"title": "no id", "text": "y"})
    folder = beir_dir(tmp_path, rows)
    with pytest.raises(InputError) as info:
        list(BeirReader().read(folder))
    assert str(info.value) == f"{folder / 'corpus.jsonl'}:17: _id: missing"
    assert (info.value.line, info.value.field, info.value.problem) == (17, "_id", "missing")


NOTHING = "and so is the title: nothing to index"


@pytest.mark.parametrize(
    ("row", "field", "problem"),
    [
        ('{"_id": "a", "text": "x"', "record", "invalid JSON: Expecting ',' delimiter (column 25)"),
        ('["a", "b"]', "record", "not a JSON object (got list)"),
        ({"_id": "", "text": "x"}, "_id", "empty"),
        ({"_id": 1.5, "text": "x"}, "_id", "not a string or integer (got float)"),
        ({"_id": "a", "title": "T"}, "text", "missing"),
        ({"_id": "a", "title": "T", "text": None}, "text", "missing"),
        ({"_id": "a", "title": "T", "text": "   "}, "text", "empty"),
        ({"_id": "a"}, "text", "missing"),
        ({"_id": "a", "title": "", "text": ""}, "text", f"empty, {NOTHING}"),
        ({"_id": "a", "text": 5}, "text", "not a string (got int)"),
        ({"_id": "a", "title": 3, "text": "x"}, "title", "not a string (got int)"),
        ({"_id": "a", "text": "x", "metadata": [1]}, "metadata", "not a JSON object"),
    ],
)
def test_beir_bad_records(tmp_path: Path, row: object, field: str, problem: str) -> None:
    folder = beir_dir(tmp_path, [{"_id": "ok", "text": "fine"}, row])
    with pytest.raises(InputError) as info:
        list(BeirReader().read(folder))
    assert str(info.value) == f"{folder / 'corpus.jsonl'}:2: {field}: {problem}"


def test_invalid_utf8_is_a_record_error(tmp_path: Path) -> None:
    file = tmp_path / "docs.jsonl"
    file.write_bytes(b'{"id": "a", "text": "ok"}\n{"id": "b", "text": "\xff"}\n')
    with pytest.raises(InputError, match=r"docs.jsonl:2: record: not valid UTF-8"):
        list(JsonlReader().read(file))


def test_jsonl_line_numbers_count_blank_lines(tmp_path: Path) -> None:
    file = write_lines(
        tmp_path / "docs.jsonl", [{"id": "a", "text": "x"}, "", "  ", {"id": "b", "text": "y"}]
    )
    assert [(n, d.doc_id) for n, d in JsonlReader().read(file)] == [(1, "a"), (4, "b")]


def test_jsonl_custom_fields_keep_every_other_field(tmp_path: Path) -> None:
    file = write_lines(
        tmp_path / "docs.jsonl",
        [
            {
                "pmid": "7",
                "headline": "H",
                "abstract": "A.",
                "year": 1999,
                "metadata": {"x": 1},
                "id": "q",
            }
        ],
    )
    reader = get_reader("jsonl", Fields(id="pmid", title="headline", text="abstract"))
    [(_, doc)] = list(reader.read(file))
    assert (doc.doc_id, doc.title, doc.text) == ("7", "H", "A.")
    assert dict(doc.metadata) == {"year": 1999, "metadata": {"x": 1}, "id": "q"}


def test_jsonl_default_fields_and_error_for_missing_custom_field(tmp_path: Path) -> None:
    file = write_lines(tmp_path / "docs.jsonl", [{"id": "a", "text": "x"}])
    assert next(JsonlReader().read(file))[1].doc_id == "a"
    with pytest.raises(InputError, match=r"docs.jsonl:1: body: missing$"):
        list(JsonlReader(Fields(text="body")).read(file))


def test_gzipped_jsonl(tmp_path: Path) -> None:
    import gzip

    file = tmp_path / "docs.jsonl.gz"
    with gzip.open(file, "wt", encoding="utf-8") as handle:
        handle.write(json.dumps({"id": "z", "text": "zipped"}) + "\n")
    assert [d.text for _, d in JsonlReader().read(file)] == ["zipped"]


def test_load_beir_queries(tmp_path: Path) -> None:
    write_lines(
        tmp_path / "queries.jsonl", [{"_id": "1", "text": "q one"}, {"_id": 2, "text": "q two"}]
    )
    assert load_beir_queries(tmp_path) == {"1": "q one", "2": "q two"}
    write_lines(tmp_path / "dup.jsonl", [{"_id": "1", "text": "a"}, {"_id": "1", "text": "b"}])
    with pytest.raises(InputError, match=r"dup.jsonl:2: _id: duplicate query id '1'"):
        load_beir_queries(tmp_path / "dup.jsonl")


def test_load_qrels_beir_three_columns_with_header(tmp_path: Path) -> None:
    (tmp_path / "qrels").mkdir()
    (tmp_path / "qrels" / "test.tsv").write_text(
        "query-id\tcorpus-id\tscore\n1\td1\t1\n1\td2\t0\n2\td1\t2\n", encoding="utf-8"
    )
    expected = {"1": {"d1": 1, "d2": 0}, "2": {"d1": 2}}
    assert load_beir_qrels(tmp_path, "test") == expected


def test_load_qrels_trec_four_columns(tmp_path: Path) -> None:
    file = tmp_path / "run.qrel"
    file.write_text("q1 0 d1 2\nq1 0 d2 1\nq2 Q0 d3 0\n", encoding="utf-8")
    assert load_qrels(file) == {"q1": {"d1": 2, "d2": 1}, "q2": {"d3": 0}}


@pytest.mark.parametrize(
    ("body", "message"),
    [
        ("q1 d1\n", r"bad.tsv:1: record: expected 3 or 4 columns, got 2"),
        ("q1\td1\t1\nq1\td2\thigh\n", r"bad.tsv:2: score: not a number: 'high'"),
        (
            "q1\td1\t1\nq1\td1\t2\n",
            r"bad.tsv:2: score: conflicting judgments for \(q1, d1\): 1 and 2",
        ),
        ("q1\td1\t1.5\n", r"bad.tsv:1: score: not an integer: '1.5'"),
    ],
)
def test_load_qrels_errors(tmp_path: Path, body: str, message: str) -> None:
    file = tmp_path / "bad.tsv"
    file.write_text(body, encoding="utf-8")
    with pytest.raises(InputError, match=message):
        load_qrels(file)


def test_jsonl_takes_beir_id_field_when_id_is_absent(tmp_path: Path, caplog) -> None:
    file = write_lines(
        tmp_path / "docs.jsonl", [{"_id": "a", "text": "x"}, {"_id": "b", "text": "y", "k": 1}]
    )
    with caplog.at_level("WARNING"):
        docs = [d for _, d in JsonlReader().read(file)]
    assert [d.doc_id for d in docs] == ["a", "b"]
    assert dict(docs[1].metadata) == {"k": 1}  # "_id" is the id, not metadata
    assert [r.getMessage() for r in caplog.records] == [
        f"{file}: no 'id' field; '_id' is used as the document id"
    ]


def test_jsonl_named_id_field_gets_no_fallback(tmp_path: Path) -> None:
    from sciera.corpus.readers.base import Fields

    file = write_lines(tmp_path / "docs.jsonl", [{"_id": "a", "text": "x"}])
    with pytest.raises(InputError, match=r"docs.jsonl:1: id: missing"):
        list(JsonlReader(Fields(id="id")).read(file))


def test_relevant_docs_are_the_positive_judgments_of_every_query():
    from sciera.corpus import relevant_docs

    qrels = {"q1": {"d1": 1, "d2": 0}, "q2": {"d3": 2, "d1": 1}, "q3": {"d4": 0}}
    assert relevant_docs(qrels) == {"d1", "d3"}
    assert relevant_docs({}) == set()
