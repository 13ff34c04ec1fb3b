"""ingest(): counts, idempotency, updates, resume, bad records and the skip report."""

from __future__ import annotations

import json
import shutil
from pathlib import Path

import pytest

from sciera.corpus import Fields, IngestReport, PassageStore, ingest
from sciera.errors import InputError, ScieraError


def sentence(i: int, words: int = 5) -> str:
    return " ".join([f"S{i}", *["w"] * (words - 2), "end."])


def write_docs(path: Path, rows: list[dict | str]) -> Path:
    lines = [r if isinstance(r, str) else json.dumps(r) for r in rows]
    path.write_text("\n".join(lines) + "\n", encoding="utf-8")
    return path


def rows(n: int, sentences: int = 3) -> list[dict | str]:
    return [
        {"id": f"d{i}", "title": f"T{i}", "text": " ".join(sentence(j) for j in range(sentences))}
        for i in range(1, n + 1)
    ]


def stored(corpus: Path) -> tuple[int, int]:
    with PassageStore.open(corpus) as store:
        return store.count_documents(), store.count_passages()


def test_ingest_counts_and_summary(tmp_path: Path) -> None:
    file = write_docs(tmp_path / "docs.jsonl", rows(5))
    report = ingest(file, tmp_path / "c", max_words=10)
    assert isinstance(report, IngestReport)
    # 3 sentences of 5 words, limit 10: 2 passages per document
    assert (report.added, report.updated, report.unchanged, report.skipped) == (5, 0, 0, 0)
    assert (report.passages, report.records, report.resumed_after) == (10, 5, 0)
    assert report.format == "jsonl" and report.source == str(file.resolve())
    assert stored(tmp_path / "c") == (5, 10)
    assert report.summary().startswith(
        "docs.jsonl: 5 documents added, 0 updated, 0 unchanged; 10 passages; 0 skipped; "
    )


def test_reingest_same_file_adds_nothing(tmp_path: Path) -> None:
    file = write_docs(tmp_path / "docs.jsonl", rows(5))
    ingest(file, tmp_path / "c", max_words=10)
    with PassageStore.open(tmp_path / "c") as store:
        fp = store.fingerprint()
    again = ingest(file, tmp_path / "c", max_words=10)
    assert (again.added, again.updated, again.unchanged, again.records) == (0, 0, 0, 0)
    assert again.resumed_after == 5
    assert "5 records already ingested" in again.summary()
    copy = shutil.copy(file, tmp_path / "copy.jsonl")  # same documents from another file
    third = ingest(copy, tmp_path / "c", max_words=10)
    assert (third.added, third.updated, third.unchanged, third.passages) == (0, 0, 5, 0)
    assert stored(tmp_path / "c") == (5, 10)
    with PassageStore.open(tmp_path / "c") as store:
        assert store.fingerprint() == fp


def test_changed_document_is_updated_and_reported(tmp_path: Path) -> None:
    ingest(write_docs(tmp_path / "v1.jsonl", rows(4)), tmp_path / "c", max_words=10)
    changed = rows(4)
    changed[2] = {"id": "d3", "title": "T3", "text": "Only one sentence now."}
    report = ingest(write_docs(tmp_path / "v2.jsonl", changed), tmp_path / "c", max_words=10)
    assert (report.added, report.updated, report.unchanged, report.passages) == (0, 1, 3, 1)
    assert report.updated_ids == ("d3",)
    assert stored(tmp_path / "c") == (4, 7)
    with PassageStore.open(tmp_path / "c") as store:
        assert [p.text for p in store.get_passages(["d3#0"])] == ["Only one sentence now."]


def test_other_max_words_rechunks(tmp_path: Path) -> None:
    file = write_docs(tmp_path / "docs.jsonl", rows(3))
    ingest(file, tmp_path / "c", max_words=10)
    report = ingest(file, tmp_path / "c", max_words=15)  # parameters changed: read again
    assert (report.resumed_after, report.updated, report.passages) == (0, 3, 3)
    assert stored(tmp_path / "c") == (3, 3)


def test_bad_record_stops_keeping_committed_records_then_resume(tmp_path: Path) -> None:
    data = rows(10)
    data[6] = {"title": "no id", "text": "x"}  # line 7
    file = write_docs(tmp_path / "docs.jsonl", data)
    with pytest.raises(InputError) as info:
        ingest(file, tmp_path / "c", max_words=10, batch_size=4)
    assert str(info.value) == f"{file.resolve()}:7: id: missing"
    assert stored(tmp_path / "c") == (6, 12)  # batch 1-4 and the partial batch 5-6
    with PassageStore.open(tmp_path / "c") as store:
        entry = store.journal_entry(str(file.resolve()))
    assert (entry.last_record, entry.complete) == (6, False)

    report = ingest(file, tmp_path / "c", max_words=10, batch_size=4, skip_bad=True)
    assert report.resumed_after == 6
    assert (report.records, report.added, report.skipped) == (4, 3, 1)
    assert stored(tmp_path / "c") == (9, 18)
    lines = Path(report.skip_report).read_text().splitlines()
    assert Path(report.skip_report).parent == tmp_path / "c"
    assert [json.loads(line) for line in lines] == [
        {
            "source": str(file.resolve()),
            "record": 7,
            "field": "id",
            "problem": "missing",
            "message": f"{file.resolve()}:7: id: missing",
        }
    ]


def test_skip_bad_lists_every_skipped_record(tmp_path: Path) -> None:
    data = rows(5)
    data[1] = "{not json"
    data[3] = {"id": "d4", "text": ""}
    file = write_docs(tmp_path / "docs.jsonl", data)
    report = ingest(file, tmp_path / "c", max_words=10, skip_bad=True)
    assert (report.added, report.skipped) == (3, 2)
    listed = [json.loads(line) for line in Path(report.skip_report).read_text().splitlines()]
    assert [(r["record"], r["field"], r["problem"]) for r in listed] == [
        (2, "record", "invalid JSON: Expecting property name enclosed in double quotes (column 2)"),
        (4, "text", "empty, and so is the title: nothing to index"),
    ]
    clean = ingest(write_docs(tmp_path / "ok.jsonl", rows(2)), tmp_path / "c2", skip_bad=True)
    assert clean.skip_report is None


def test_duplicate_id_in_one_file_is_a_bad_record(tmp_path: Path) -> None:
    data = rows(3)
    data.append(dict(data[0]))
    file = write_docs(tmp_path / "docs.jsonl", data)
    with pytest.raises(InputError) as info:
        ingest(file, tmp_path / "c")
    assert str(info.value) == (
        f"{file.resolve()}:4: id: duplicate document id 'd1' (first at record 1)"
    )
    assert stored(tmp_path / "c")[0] == 3


def test_fields_format_and_settings_default(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    file = tmp_path / "docs.csv"
    file.write_text("key,body\nk1," + " ".join(sentence(j, 6) for j in range(4)) + "\n")
    monkeypatch.setenv("SCIERA_CORPUS__MAX_WORDS", "12")
    report = ingest(file, tmp_path / "c", fields=Fields(id="key", text="body"))
    assert (report.format, report.added, report.passages) == ("csv", 1, 2)
    with PassageStore.open(tmp_path / "c") as store:
        assert all(len(p.text.split()) <= 12 for p in store.iter_passages())


def test_beir_folder_with_progress_off_a_terminal(tmp_path: Path) -> None:
    folder = tmp_path / "beir"
    folder.mkdir()
    write_docs(folder / "corpus.jsonl", [{"_id": "1", "title": "", "text": "Mice died."}])
    report = ingest(folder, tmp_path / "c", progress=True)
    assert (report.format, report.added, report.source) == (
        "beir",
        1,
        str(folder.resolve() / "corpus.jsonl"),
    )


def test_input_problems_are_scieraerrors(tmp_path: Path) -> None:
    with pytest.raises(ScieraError, match="no such file or folder"):
        ingest(tmp_path / "missing.jsonl", tmp_path / "c")
    file = write_docs(tmp_path / "docs.jsonl", rows(1))
    with pytest.raises(ScieraError, match="unknown format 'word'"):
        ingest(file, tmp_path / "c", format="word")
    with pytest.raises(ScieraError, match="must be positive"):
        ingest(file, tmp_path / "c", max_words=0)


# --- sentences ------------------------------------------------------------------------------


def sentence_rows(corpus: Path) -> list[tuple[str, int, str, str]]:
    with PassageStore.open(corpus) as store:
        found = store.sentence_rows(store.doc_ids())
    return [(s.doc_id, s.index, s.passage_id, s.text) for rows in found.values() for s in rows]


def test_sentences_are_stored_with_their_passages_and_never_twice(tmp_path: Path) -> None:
    file = write_docs(tmp_path / "docs.jsonl", rows(3))
    ingest(file, tmp_path / "c", max_words=10)
    first = sentence_rows(tmp_path / "c")
    # 3 sentences of 5 words, limit 10: sentences 0 and 1 in passage #0, sentence 2 in #1
    assert [r for r in first if r[0] == "d2"] == [
        ("d2", 0, "d2#0", sentence(0)),
        ("d2", 1, "d2#0", sentence(1)),
        ("d2", 2, "d2#1", sentence(2)),
    ]
    ingest(file, tmp_path / "c", max_words=10)
    ingest(shutil.copy(file, tmp_path / "copy.jsonl"), tmp_path / "c", max_words=10)
    assert sentence_rows(tmp_path / "c") == first


def test_changed_document_replaces_its_sentences(tmp_path: Path) -> None:
    ingest(write_docs(tmp_path / "v1.jsonl", rows(2)), tmp_path / "c", max_words=10)
    changed = rows(2)
    changed[0] = {"id": "d1", "title": "T1", "text": "Only one sentence now."}
    ingest(write_docs(tmp_path / "v2.jsonl", changed), tmp_path / "c", max_words=10)
    with PassageStore.open(tmp_path / "c") as store:
        assert store.sentences(["d1"]) == {"d1": ("T1", ["Only one sentence now."])}
        assert store.count_sentences() == 1 + 3


def test_resume_after_a_bad_record_keeps_sentences_of_committed_records(tmp_path: Path) -> None:
    data = rows(6)
    data[4] = {"title": "no id", "text": "x"}  # line 5
    file = write_docs(tmp_path / "docs.jsonl", data)
    with pytest.raises(InputError):
        ingest(file, tmp_path / "c", max_words=10, batch_size=2)
    with PassageStore.open(tmp_path / "c") as store:
        assert store.count_sentences() == 4 * 3
    ingest(file, tmp_path / "c", max_words=10, batch_size=2, skip_bad=True)
    got = sentence_rows(tmp_path / "c")
    assert len(got) == len(set(got)) == 5 * 3
    assert {r[0] for r in got} == {"d1", "d2", "d3", "d4", "d6"}


def test_scifact_sentences_format_keeps_the_given_sentences(tmp_path: Path) -> None:
    abstract = ["Dr. Who w w end.", "Second sentence here.   \n", "Third (n = 7)."]
    file = write_docs(
        tmp_path / "corpus_sentences.jsonl",
        [{"doc_id": 7, "title": "T7", "abstract": abstract, "structured": False}],
    )
    report = ingest(file, tmp_path / "c", max_words=4)
    assert report.format == "scifact-sentences"  # detected from the content
    with PassageStore.open(tmp_path / "c") as store:
        assert store.sentences(["7"]) == {"7": ("T7", abstract)}
        passages = store.document_passages("7")
        rows_ = store.sentence_rows(["7"])["7"]
    # passages are cut on the given boundaries (a sentence over the limit runs on)
    assert [p.text for p in passages] == [
        "Dr. Who w w",
        "end. Second sentence here.",
        "Third (n = 7).",
    ]
    assert [s.passage_id for s in rows_] == ["7#0", "7#1", "7#2"]


def test_reingesting_a_corpus_from_before_sentences_fills_them_in(tmp_path: Path) -> None:
    import sqlite3

    file = write_docs(tmp_path / "docs.jsonl", rows(3))
    ingest(file, tmp_path / "c", max_words=10)
    with PassageStore.open(tmp_path / "c") as store:
        fp = store.fingerprint()
    conn = sqlite3.connect(tmp_path / "c" / "store.sqlite")
    conn.executescript(  # schema 1: no sentences, sections or references
        "DROP TABLE sentences; ALTER TABLE documents DROP COLUMN sentence_hash; "
        "DROP TABLE doc_references; ALTER TABLE passages DROP COLUMN section; "
        "ALTER TABLE passages DROP COLUMN subsection; ALTER TABLE passages DROP COLUMN kind; "
        "UPDATE meta SET value = '1' WHERE key = 'schema_version';"
    )
    conn.close()
    with PassageStore.open(tmp_path / "c") as store, pytest.raises(ScieraError, match="re-ingest"):
        store.sentences(["d1"])
    report = ingest(file, tmp_path / "c", max_words=10)  # the same command as before
    assert (report.resumed_after, report.records, report.unchanged) == (0, 3, 3)
    with PassageStore.open(tmp_path / "c") as store:
        assert store.fingerprint() == fp  # passages untouched: indexes stay valid
        assert store.sentences(["d1"])["d1"][1] == [sentence(j) for j in range(3)]


def _as_if_older_rules(corpus: Path, doc_id: str, merged: str) -> None:
    """The store as an ingest under older splitter rules left it: the journal without the
    rules' version, and ``doc_id``'s sentences before unglue (one merged sentence)."""
    import sqlite3

    conn = sqlite3.connect(corpus / "store.sqlite")
    params = json.loads(conn.execute("SELECT params FROM journal").fetchone()[0])
    del params["sentences"]
    conn.execute("UPDATE journal SET params = ?", (json.dumps(params),))
    conn.execute("DELETE FROM sentences WHERE doc_id = ?", (doc_id,))
    conn.execute(
        "INSERT INTO sentences (doc_id, idx, passage_id, text) VALUES (?, 0, ?, ?)",
        (doc_id, f"{doc_id}#0", merged),
    )
    conn.execute("UPDATE documents SET sentence_hash = 'old' WHERE doc_id = ?", (doc_id,))
    conn.commit()
    conn.close()


def test_sentences_cut_by_older_rules_are_refreshed_in_place(tmp_path: Path) -> None:
    from sciera.corpus.ingest import stale_sentences

    glued = "Cells grew at 37°C.The yield rose."
    file = write_docs(tmp_path / "docs.jsonl", [*rows(2), {"id": "g", "text": glued}])
    ingest(file, tmp_path / "c", max_words=10)
    with PassageStore.open(tmp_path / "c") as store:
        fp, new = store.fingerprint(), store.sentences(["g"])["g"][1]
        assert new == ["Cells grew at 37°C.", "The yield rose."] and stale_sentences(store) == []
    _as_if_older_rules(tmp_path / "c", "g", glued)
    with PassageStore.open(tmp_path / "c") as store:
        assert stale_sentences(store) == [str(file.resolve())]
    report = ingest(file, tmp_path / "c", max_words=10)  # the same command as before
    assert (report.added, report.updated, report.unchanged) == (0, 0, 3)
    assert report.sentences_refreshed == 1
    assert "sentences refreshed in 1 unchanged documents" in report.summary()
    with PassageStore.open(tmp_path / "c") as store:
        assert store.sentences(["g"])["g"][1] == new
        assert store.fingerprint() == fp  # passages untouched: indexes stay valid
        assert stale_sentences(store) == []
    again = ingest(file, tmp_path / "c", max_words=10)
    assert again.records == 0 and again.sentences_refreshed == 0


def test_a_format_that_gives_its_sentences_is_never_stale(tmp_path: Path) -> None:
    import sqlite3

    from sciera.corpus.ingest import stale_sentences

    file = write_docs(
        tmp_path / "corpus_sentences.jsonl",
        [{"doc_id": 7, "title": "T7", "abstract": ["One.", "Two."], "structured": False}],
    )
    ingest(file, tmp_path / "c")
    conn = sqlite3.connect(tmp_path / "c" / "store.sqlite")
    (params,) = conn.execute("SELECT params FROM journal").fetchone()
    assert json.loads(params)["sentences"] == "given"
    older = params.replace(', "sentences": "given"', "")
    assert "sentences" not in json.loads(older)
    conn.execute("UPDATE journal SET params = ?", (older,))
    conn.commit()
    conn.close()
    with PassageStore.open(tmp_path / "c") as store:  # ingested before the rules' version
        assert stale_sentences(store) == []


def test_a_folder_ingest_says_how_many_documents_got_new_sentences(tmp_path: Path) -> None:
    from sciera.corpus.library import ingest_folder

    folder = tmp_path / "papers"
    folder.mkdir()
    write_docs(folder / "docs.jsonl", [*rows(1), {"id": "g", "text": "At 37°C.The end."}])
    ingest_folder(folder, tmp_path / "c", max_words=10)
    _as_if_older_rules(tmp_path / "c", "g", "At 37°C.The end.")
    again = ingest_folder(folder, tmp_path / "c", max_words=10)
    assert "2 unchanged" in again.summary()
    assert "sentences refreshed in 1 unchanged documents" in again.summary()
    assert (
        "sentences refreshed" not in ingest_folder(folder, tmp_path / "c", max_words=10).summary()
    )
