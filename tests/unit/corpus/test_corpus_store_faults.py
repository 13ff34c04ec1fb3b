"""Damaged store files (Hypothesis) and two ingests at once.

A small store is built, then truncated or overwritten at generated offsets. Opening and
reading it, ingesting into it and indexing it either work, or stop with a one-line
ScieraError naming the store file; an ingest never writes into a store that fails SQLite's
integrity check.
"""

from __future__ import annotations

import json
import shutil
import sqlite3
import threading
from pathlib import Path

import pytest
from hypothesis import strategies as st

from fuzz_tiers import tiered
from sciera.corpus import PassageStore, ingest
from sciera.corpus.store import STORE_FILE
from sciera.errors import ScieraError


def docs(path: Path, first: int, n: int) -> Path:
    rows = [
        {"id": f"d{i}", "title": f"Title {i}", "text": f"Sentence {i} about topic {i % 7}. More."}
        for i in range(first, first + n)
    ]
    path.write_text("".join(json.dumps(r) + "\n" for r in rows))
    return path


@pytest.fixture(scope="module")
def pristine(tmp_path_factory: pytest.TempPathFactory) -> Path:
    root = tmp_path_factory.mktemp("pristine")
    ingest(docs(root / "a.jsonl", 0, 300), root / "corpus", max_words=20)
    return root / "corpus"


def integrity(store_file: Path) -> str:
    with sqlite3.connect(store_file) as conn:
        return conn.execute("PRAGMA integrity_check").fetchone()[0]


def one_line_naming(err: ScieraError, store_file: Path) -> None:
    message = str(err)
    assert "\n" not in message and str(store_file) in message, message


DAMAGE = st.one_of(
    st.tuples(st.just("truncate"), st.floats(0.0, 0.999)),
    st.tuples(
        st.just("overwrite"),
        st.lists(st.tuples(st.floats(0.0, 0.999), st.binary(min_size=1, max_size=64)), min_size=1),
    ),
)


def damage(store_file: Path, how: tuple) -> None:
    data = bytearray(store_file.read_bytes())
    if how[0] == "truncate":
        del data[int(len(data) * how[1]) :]
    else:
        for where, junk in how[1]:
            at = int(len(data) * where)
            data[at : at + len(junk)] = junk
    store_file.write_bytes(bytes(data))


@tiered(default=30, nightly=500, how=DAMAGE)
def test_a_damaged_store_is_refused_on_one_line_never_used(
    pristine: Path, tmp_path_factory: pytest.TempPathFactory, how: tuple
) -> None:
    tmp = tmp_path_factory.mktemp("damaged")
    corpus = tmp / "corpus"
    shutil.copytree(pristine, corpus)
    store_file = corpus / STORE_FILE
    damage(store_file, how)
    try:
        with PassageStore.open(corpus) as store:
            store.count_documents()
            store.fingerprint()
            sum(1 for _ in store.iter_passages())
            store.get_document("d1")
    except ScieraError as err:
        one_line_naming(err, store_file)
    try:
        ingest(docs(tmp / "b.jsonl", 300, 5), corpus, max_words=20)
    except ScieraError as err:
        one_line_naming(err, store_file)
    else:  # written to: the store must be sound
        assert integrity(store_file) == "ok"


def test_two_ingests_into_one_corpus_are_serialized(tmp_path: Path) -> None:
    """Both runs finish (one waits for the other's batch), and nothing is lost or doubled."""
    corpus = tmp_path / "corpus"
    files = [docs(tmp_path / f"{i}.jsonl", i * 400, 400) for i in range(2)]
    errors: list[BaseException] = []

    def run(file: Path) -> None:
        try:
            ingest(file, corpus, max_words=20, batch_size=25)
        except BaseException as exc:
            errors.append(exc)

    threads = [threading.Thread(target=run, args=(f,)) for f in files]
    for t in threads:
        t.start()
    for t in threads:
        t.join(60)
    assert not errors, errors
    with PassageStore.open(corpus) as store:
        assert store.count_documents() == 800
    assert integrity(corpus / STORE_FILE) == "ok"


# Regressions: the generated damage above raised sqlite3.DatabaseError ("database disk image
# is malformed", "file is not a database") from the first statement that met it, ingest wrote
# into a store whose indexes disagreed with their tables, and a document whose metadata bytes
# were changed raised json.JSONDecodeError.


def copy_of(pristine: Path, tmp_path: Path) -> tuple[Path, Path]:
    corpus = tmp_path / "corpus"
    shutil.copytree(pristine, corpus)
    return corpus, corpus / STORE_FILE


def test_a_file_that_is_not_sqlite_is_named(pristine: Path, tmp_path: Path) -> None:
    corpus, store_file = copy_of(pristine, tmp_path)
    store_file.write_bytes(b"hello, not a database" * 100)
    with pytest.raises(ScieraError, match="the file is damaged") as caught:
        PassageStore.open(corpus)
    one_line_naming(caught.value, store_file)


def test_a_store_truncated_to_half_stops_ingest_on_one_line(pristine: Path, tmp_path: Path) -> None:
    corpus, store_file = copy_of(pristine, tmp_path)
    damage(store_file, ("truncate", 0.5))
    with pytest.raises(ScieraError, match="damaged") as caught:
        ingest(docs(tmp_path / "b.jsonl", 300, 5), corpus, max_words=20)
    one_line_naming(caught.value, store_file)


def test_changed_metadata_bytes_are_a_one_line_error(pristine: Path, tmp_path: Path) -> None:
    corpus, store_file = copy_of(pristine, tmp_path)
    with sqlite3.connect(store_file) as conn:
        conn.execute("UPDATE documents SET metadata = '{\"a' WHERE doc_id = 'd1'")
    with PassageStore.open(corpus) as store, pytest.raises(ScieraError) as caught:
        store.get_document("d1")
    one_line_naming(caught.value, store_file)
    assert "'d1'" in str(caught.value)


def test_ingest_refuses_a_store_the_integrity_check_fails(pristine: Path, tmp_path: Path) -> None:
    """Reads still work (the damage is pages no table owns), but nothing is written."""
    corpus, store_file = copy_of(pristine, tmp_path)
    with sqlite3.connect(store_file) as conn:  # forget an index: its pages belong to nothing
        conn.execute("PRAGMA writable_schema = ON")
        conn.execute(
            "DELETE FROM sqlite_master WHERE name = "
            "(SELECT name FROM sqlite_master WHERE type = 'index' AND sql IS NOT NULL LIMIT 1)"
        )
    assert integrity(store_file) != "ok"
    with PassageStore.open(corpus) as store:
        assert store.count_documents() == 300
    before = store_file.read_bytes()
    with pytest.raises(ScieraError, match=r"integrity check: .*never used") as caught:
        ingest(docs(tmp_path / "b.jsonl", 300, 5), corpus, max_words=20)
    one_line_naming(caught.value, store_file)
    assert store_file.read_bytes() == before


@pytest.fixture
def small_fs(tmp_path: Path):
    """A real 1 MB file system (tmpfs), where mounting is allowed (root, CAP_SYS_ADMIN)."""
    import subprocess

    mount = tmp_path / "small"
    mount.mkdir()
    done = subprocess.run(
        ["mount", "-t", "tmpfs", "-o", "size=1m", "tmpfs", str(mount)], capture_output=True
    )
    if done.returncode != 0:
        pytest.skip("cannot mount a tmpfs here (needs root)")
    try:
        yield mount
    finally:
        subprocess.run(["umount", "-l", str(mount)], capture_output=True)


def test_a_really_full_file_system_stops_ingest_on_one_line(tmp_path: Path, small_fs: Path) -> None:
    """The same on a real 1 MB tmpfs: ingest stops with the one-line "disk is full"
    naming the store, the store passes its integrity check with whole batches, and once
    there is room (the store moved to a roomy disk) the same ingest finishes."""
    import shutil

    corpus = small_fs / "corpus"
    big = docs(tmp_path / "big.jsonl", 0, 6000)
    with pytest.raises(ScieraError, match="disk is full") as caught:
        ingest(big, corpus, max_words=20, batch_size=100)
    message = str(caught.value)
    assert "\n" not in message and STORE_FILE in message, message
    assert integrity(corpus / STORE_FILE) == "ok"
    with PassageStore.open(corpus) as store:
        kept = store.count_documents()
    assert 0 < kept < 6000 and kept % 100 == 0  # whole batches only
    roomy = tmp_path / "corpus"
    shutil.copytree(corpus, roomy)
    report = ingest(big, roomy, max_words=20, batch_size=100)
    assert report.added == 6000 - kept


def test_a_full_disk_stops_ingest_on_one_line_and_keeps_the_store_sound(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """The store may not grow past a few pages (SQLite's max_page_count: the error a full
    disk gives); ingest stops naming the file, whole batches stay, and a re-run finishes."""
    import sciera.corpus.store as store_module
    from sciera.corpus.sqlite_errors import connect

    corpus = tmp_path / "corpus"
    ingest(docs(tmp_path / "a.jsonl", 0, 100), corpus, max_words=20)
    store_file = corpus / STORE_FILE

    def cramped(path: Path, **kwargs: object) -> object:
        conn = connect(path, **kwargs)
        pages = conn.execute("PRAGMA page_count").fetchone()[0]
        conn.execute(f"PRAGMA max_page_count = {pages + 8}")
        return conn

    big = docs(tmp_path / "b.jsonl", 100, 2000)
    monkeypatch.setattr(store_module, "checked_connect", cramped)
    with pytest.raises(ScieraError, match="the disk is full") as caught:
        ingest(big, corpus, max_words=20, batch_size=50)
    one_line_naming(caught.value, store_file)
    monkeypatch.undo()
    assert integrity(store_file) == "ok"
    with PassageStore.open(corpus) as store:
        kept = store.count_documents()
    assert 100 <= kept < 2100 and kept % 50 == 0  # whole batches only
    report = ingest(big, corpus, max_words=20, batch_size=50)
    assert report.resumed_after == kept - 100 and report.added == 2100 - kept


@pytest.mark.parametrize(
    ("offset", "problem"),
    [(47, "the file is damaged"), (18, "cannot write the file")],
)
def test_a_changed_header_byte_is_named(
    pristine: Path, tmp_path: Path, offset: int, problem: str
) -> None:
    # found by the nightly run: a changed schema format number (header offset 44-47) raised
    # sqlite3.OperationalError "unsupported file format"; a changed write version (offset
    # 18) "attempt to write a readonly database"
    corpus, store_file = copy_of(pristine, tmp_path)
    data = bytearray(store_file.read_bytes())
    data[offset] = 7
    store_file.write_bytes(bytes(data))
    with pytest.raises(ScieraError, match=problem) as caught:
        ingest(docs(tmp_path / "b.jsonl", 300, 5), corpus, max_words=20)
    one_line_naming(caught.value, store_file)
