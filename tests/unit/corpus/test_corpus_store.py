"""The SQLite passage store."""

from __future__ import annotations

import sqlite3
from pathlib import Path

import pytest

from sciera.corpus import PassageStore, Sentence, chunk_document, chunk_with_sentences
from sciera.corpus.store import STORE_FILE, DuplicateDocumentError
from sciera.errors import ScieraError
from sciera.types import Document, Passage


def doc(doc_id: str, text: str = "Mice died. Rats lived.", **meta: object) -> Document:
    return Document(doc_id, f"Title {doc_id}", text, metadata=meta)


def passages_of(d: Document, *bodies: str) -> list[Passage]:
    return [Passage(f"{d.doc_id}#{i}", d.doc_id, i, d.title, b) for i, b in enumerate(bodies)]


@pytest.fixture
def store(tmp_path: Path) -> PassageStore:
    with PassageStore.open(tmp_path / "corpus", create=True) as s:
        yield s


def test_open_requires_an_existing_store_unless_create(tmp_path: Path) -> None:
    with pytest.raises(ScieraError, match=r"no passage store at .*store\.sqlite"):
        PassageStore.open(tmp_path / "missing")
    PassageStore.open(tmp_path / "new", create=True).close()
    assert (tmp_path / "new" / STORE_FILE).is_file()
    with PassageStore.open(tmp_path / "new") as again:
        assert again.count_documents() == 0
    wal = sqlite3.connect(tmp_path / "new" / STORE_FILE).execute("PRAGMA journal_mode").fetchone()
    assert wal == ("wal",)


def test_add_count_and_read_back(store: PassageStore) -> None:
    a, b = doc("a", year=2001), doc("b")
    added = store.add_documents([(a, passages_of(a, "Mice died.", "Rats lived.")), b], source="t")
    assert added == 2
    assert store.count_documents() == 2
    assert store.count_passages() == 3  # b is chunked with the default limit: one passage
    assert store.get_document("a") == a
    assert dict(store.get_document("a").metadata) == {"year": 2001}
    assert store.get_document("zzz") is None
    assert [p.passage_id for p in store.iter_passages()] == ["a#0", "a#1", "b#0"]
    assert [p.passage_id for p in store.iter_passages(batch_size=1)] == ["a#0", "a#1", "b#0"]
    assert store.get_passages(["a#1"]) == [Passage("a#1", "a", 1, "Title a", "Rats lived.")]
    # sentences: given passages are split one by one; a bare document by the chunker
    assert store.sentences(["b", "zzz", "a"]) == {
        "b": ("Title b", ["Mice died.", "Rats lived."]),
        "a": ("Title a", ["Mice died.", "Rats lived."]),
    }
    rows = store.sentence_rows(["a", "b"])
    assert [(s.index, s.passage_id) for s in rows["a"]] == [(0, "a#0"), (1, "a#1")]
    assert [(s.index, s.passage_id) for s in rows["b"]] == [(0, "b#0"), (1, "b#0")]
    assert store.count_sentences() == 4


def test_get_passages_keeps_the_given_order_and_names_unknown_ids(store: PassageStore) -> None:
    docs = [doc(str(i)) for i in range(3)]
    store.add_documents(docs, source="t")
    ids = ["2#0", "0#0", "2#0", "1#0"]
    assert [p.passage_id for p in store.get_passages(ids)] == ids
    with pytest.raises(KeyError, match="unknown passage id '9#0'"):
        store.get_passages(["0#0", "9#0"])
    # find_passages leaves unknown ids out instead of raising
    known = store.get_passages(["0#0", "1#0"])
    assert store.find_passages(["9#0", "1#0", "0#0", "1#0"]) == {p.passage_id: p for p in known}
    many = [f"{i % 3}#0" for i in range(1200)]  # more ids than one SQL query takes
    assert [p.passage_id for p in store.get_passages(many)] == many


def test_document_passages_are_in_document_order(store: PassageStore) -> None:
    a, b = doc("a"), doc("b")
    bodies = [f"Sentence {i}." for i in range(70)]  # more than a small batch of ids
    store.add_documents([(b, passages_of(b, "B.")), (a, passages_of(a, *bodies))], source="t")
    got = store.document_passages("a")
    assert [p.index for p in got] == list(range(70)) and got[5].text == "Sentence 5."
    assert [p.passage_id for p in store.document_passages("b")] == ["b#0"]
    assert store.document_passages("zzz") == []


def test_same_content_adds_nothing_and_keeps_the_fingerprint(store: PassageStore) -> None:
    empty = store.fingerprint()
    store.add_documents([doc("a"), doc("b")], source="t")
    first = store.fingerprint()
    assert first != empty
    assert store.add_documents([doc("a"), doc("b")], source="other") == 0
    assert store.fingerprint() == first
    assert (store.count_documents(), store.count_passages()) == (2, 2)


def test_changed_content_replaces_passages_and_changes_the_fingerprint(store: PassageStore) -> None:
    a = doc("a")
    store.add_documents([(a, passages_of(a, "one", "two", "three")), doc("b")], source="t")
    before = store.fingerprint()
    new_a = doc("a", "Entirely new text.")
    with store.transaction() as tx:
        assert tx.put(new_a, chunk_document(new_a)) == "updated"
    assert store.fingerprint() != before
    assert store.count_passages() == 2
    assert [p.text for p in store.get_passages(["a#0"])] == ["Entirely new text."]
    with pytest.raises(KeyError, match="a#1"):
        store.get_passages(["a#1"])
    assert store.get_document("a").text == "Entirely new text."
    assert store.sentences(["a"]) == {"a": ("Title a", ["Entirely new text."])}
    assert store.count_sentences() == 3  # a's 3 old sentences replaced by 1, b's 2 kept
    # the replaced passages are appended: insertion order
    assert [p.passage_id for p in store.iter_passages()] == ["b#0", "a#0"]


def test_metadata_change_alone_is_an_update(store: PassageStore) -> None:
    store.add_documents([doc("a", year=1)], source="t")
    before = store.fingerprint()
    assert store.add_documents([doc("a", year=2)], source="t") == 1
    assert store.fingerprint() != before
    assert store.get_document("a").metadata["year"] == 2


def test_fingerprint_persists_and_a_failed_transaction_leaves_nothing(tmp_path: Path) -> None:
    with PassageStore.open(tmp_path, create=True) as s:
        s.add_documents([doc("a")], source="t")
        fp = s.fingerprint()
        with pytest.raises(RuntimeError), s.transaction() as tx:
            tx.put(doc("b"), chunk_document(doc("b")))
            raise RuntimeError("boom")
        assert (s.count_documents(), s.fingerprint()) == (1, fp)
        assert (s.sentences(["b"]), s.count_sentences()) == ({}, 2)
    with PassageStore.open(tmp_path) as s:
        assert s.fingerprint() == fp
        assert s.get_document("b") is None


def test_duplicate_id_within_one_source_file(store: PassageStore) -> None:
    with store.transaction() as tx:
        tx.put(doc("a"), chunk_document(doc("a")), source="f", source_hash="h", record_no=1)
        # the same record again (a re-read of the same file) is fine
        assert (
            tx.put(doc("a"), chunk_document(doc("a")), source="f", source_hash="h", record_no=1)
            == "unchanged"
        )
        with pytest.raises(
            DuplicateDocumentError, match="duplicate document id 'a' \\(first at record 1\\)"
        ):
            tx.put(doc("a"), chunk_document(doc("a")), source="f", source_hash="h", record_no=7)
        # another file may carry the same id: then it is an update or unchanged
        assert (
            tx.put(
                doc("a", "New."),
                chunk_document(doc("a", "New.")),
                source="g",
                source_hash="k",
                record_no=7,
            )
            == "updated"
        )


def test_passages_must_belong_to_their_document(store: PassageStore) -> None:
    a = doc("a")
    with pytest.raises(ValueError, match="does not belong"), store.transaction() as tx:
        tx.put(a, passages_of(doc("b"), "x"))


def test_readers_see_committed_data_while_a_write_is_open(tmp_path: Path) -> None:
    with PassageStore.open(tmp_path, create=True) as writer:
        writer.add_documents([doc("a")], source="t")
        tx = writer.transaction()
        tx.put(doc("b"), chunk_document(doc("b")))
        with PassageStore.open(tmp_path) as reader:  # opening does not wait for the writer
            assert reader.count_documents() == 1
            tx.commit()
            assert reader.count_documents() == 2
            assert reader.fingerprint() == writer.fingerprint()


def test_sentence_boundaries_alone_replace_the_sentences_not_the_passages(
    store: PassageStore,
) -> None:
    a = doc("a", "Dr. Smith came. He left.")
    passages, sentences = chunk_with_sentences(a)
    store.add_documents([a], source="t")
    before = store.fingerprint()
    assert store.sentences(["a"])["a"][1] == ["Dr. Smith came.", "He left."]
    given = chunk_with_sentences(a, sentences=[(0, 3), (4, 15), (16, 24)])
    assert given[0] == passages  # same passages, other sentence boundaries
    with store.transaction() as tx:
        assert tx.put(a, given[0], sentences=given[1]) == "unchanged"
    assert store.fingerprint() == before  # no index reads sentences
    assert store.sentences(["a"])["a"][1] == ["Dr.", "Smith came.", "He left."]
    with store.transaction() as tx:
        assert tx.put(a, passages, sentences=sentences) == "unchanged"
    assert store.count_sentences() == 2


def test_sentences_must_belong_to_the_document_and_its_passages(store: PassageStore) -> None:
    a = doc("a")
    passages, sentences = chunk_with_sentences(a)
    wrong = [Sentence("a", 0, "a#7", "Mice died."), *sentences[1:]]
    message = "not one of this document's sentences"
    with pytest.raises(ValueError, match=message), store.transaction() as tx:
        tx.put(a, passages, sentences=wrong)
    skipped = [sentences[1]]  # numbered 1 at position 0
    with pytest.raises(ValueError, match="sentence 0"), store.transaction() as tx:
        tx.put(a, passages, sentences=skipped)
    assert store.count_documents() == 0


def _downgrade_to_schema_1(path: Path) -> None:
    """Turn a store into what sciera wrote before sentences were kept (schema 1: no
    sentences, and none of schema 3's sections or references either)."""
    conn = sqlite3.connect(path)
    conn.executescript(
        "DROP TABLE sentences; ALTER TABLE documents DROP COLUMN sentence_hash; "
        "DROP TABLE doc_references; ALTER TABLE passages DROP COLUMN section; "
        "ALTER TABLE passages DROP COLUMN subsection; ALTER TABLE passages DROP COLUMN kind; "
        "UPDATE meta SET value = '1' WHERE key = 'schema_version';"
    )
    conn.close()


def test_a_store_from_before_sentences_reads_passages_and_asks_to_reingest(
    tmp_path: Path,
) -> None:
    with PassageStore.open(tmp_path, create=True) as s:
        s.add_documents([doc("a"), doc("b")], source="t")
        fp = s.fingerprint()
    _downgrade_to_schema_1(tmp_path / STORE_FILE)
    with PassageStore.open(tmp_path) as old:
        assert old.schema_version == "1"
        assert [p.passage_id for p in old.iter_passages()] == ["a#0", "b#0"]  # search works
        assert old.fingerprint() == fp
        assert old.count_sentences() == 0
        with pytest.raises(ScieraError, match="re-ingest it") as err:
            old.sentences(["a"])
        assert "\n" not in str(err.value) and "sentence boundaries" in str(err.value)
        # the first write upgrades it; a document written before stays without sentences
        assert old.add_documents([doc("c")], source="t") == 1
        assert old.schema_version == "3"
        assert old.sentences(["c"]) == {"c": ("Title c", ["Mice died.", "Rats lived."])}
        with pytest.raises(ScieraError, match="document 'a' was ingested before"):
            old.sentences(["c", "a"])
        # writing the same document again fills its sentences in, passages untouched
        fp = old.fingerprint()
        assert old.add_documents([doc("a")], source="t") == 0
        assert old.sentences(["a"])["a"][1] == ["Mice died.", "Rats lived."]
        assert old.fingerprint() == fp


def test_unknown_schema_is_refused(tmp_path: Path) -> None:
    PassageStore.open(tmp_path, create=True).close()
    conn = sqlite3.connect(tmp_path / STORE_FILE)
    conn.execute("UPDATE meta SET value = '9' WHERE key = 'schema_version'")
    conn.commit()
    conn.close()
    with pytest.raises(ScieraError, match="store schema 9, expected 3"):
        PassageStore.open(tmp_path)
