"""`sciera ingest` end to end: kill -9 and resume, malformed records, --skip-bad."""

from __future__ import annotations

import json
import os
import re
import signal
import sqlite3
import subprocess
import time
from contextlib import closing
from pathlib import Path

import pytest
from train_cli import sciera_exe

from sciera.cli import INTERRUPTED_LINE

pytestmark = pytest.mark.e2e

SENTENCES_PER_DOC, WORDS_PER_SENTENCE, MAX_WORDS = 12, 10, 50  # -> 3 passages per document


def sciera(*args: str, **kwargs) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [sciera_exe(), *args], capture_output=True, text=True, timeout=300, **kwargs
    )


def doc_text(i: int) -> str:
    return " ".join(
        " ".join([f"Topic{i}x{j}", *["word"] * (WORDS_PER_SENTENCE - 2), "end."])
        for j in range(SENTENCES_PER_DOC)
    )


def write_corpus(path: Path, n: int) -> Path:
    with open(path, "w", encoding="utf-8") as out:
        for i in range(1, n + 1):
            out.write(
                json.dumps({"id": f"doc{i}", "title": f"Title {i}", "text": doc_text(i)}) + "\n"
            )
    return path


def journal_state(store: Path) -> tuple[int, int] | None:
    """(last_record, complete) as another process sees it, or None before the first commit."""
    if not store.exists():
        return None
    try:
        with closing(sqlite3.connect(f"file:{store}?mode=ro", uri=True, timeout=1)) as conn:
            row = conn.execute("SELECT last_record, complete FROM journal").fetchone()
    except sqlite3.OperationalError:  # schema not created yet
        return None
    return row


def store_counts(store: Path) -> dict[str, int]:
    with closing(sqlite3.connect(store)) as conn:
        one = lambda sql: conn.execute(sql).fetchone()[0]  # noqa: E731
        return {
            "documents": one("SELECT COUNT(*) FROM documents"),
            "passages": one("SELECT COUNT(*) FROM passages"),
            "distinct_passages": one("SELECT COUNT(DISTINCT passage_id) FROM passages"),
            "distinct_docs_with_passages": one("SELECT COUNT(DISTINCT doc_id) FROM passages"),
        }


@pytest.mark.parametrize("sig", [signal.SIGKILL, signal.SIGTERM], ids=["kill-9", "sigterm"])
def test_killed_mid_ingest_then_resume(tmp_path: Path, sig: signal.Signals) -> None:
    n = 6000
    data = write_corpus(tmp_path / "big.jsonl", n)
    corpus = tmp_path / "corpus"
    store = corpus / "store.sqlite"
    args = [
        sciera_exe(),
        "ingest",
        str(data),
        "--corpus",
        str(corpus),
        "--max-words",
        str(MAX_WORDS),
    ]
    proc = subprocess.Popen(args, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE, text=True)
    try:
        deadline = time.monotonic() + 120
        state = None
        while time.monotonic() < deadline:
            state = journal_state(store)
            if state is not None and state[0] >= 500:
                break
            assert proc.poll() is None, "ingest ended before its first commit was seen"
            time.sleep(0.005)
        os.kill(proc.pid, sig)
    finally:
        _, err = proc.communicate(timeout=30)
    if sig == signal.SIGKILL:
        assert proc.returncode == -signal.SIGKILL
    else:  # unwinds like Ctrl-C: a clean exit, no traceback, one line saying so
        assert proc.returncode == 130 and "Traceback" not in err, err
        assert err.splitlines()[-1] == INTERRUPTED_LINE, err
    last, complete = journal_state(store)
    assert not complete and 500 <= last < n, "the kill did not land mid-way"
    # Only whole batches survive, and the journal agrees with the store exactly.
    assert last % 500 == 0
    assert store_counts(store)["documents"] == last

    result = subprocess.run(args, capture_output=True, text=True, timeout=300)
    assert result.returncode == 0, result.stderr
    assert (
        f"{n - last} documents added, 0 updated, 0 unchanged; {3 * (n - last)} passages"
        in result.stdout
    )
    assert f"{last} records already ingested" in result.stdout
    counts = store_counts(store)
    assert counts == {
        "documents": n,
        "passages": 3 * n,
        "distinct_passages": 3 * n,
        "distinct_docs_with_passages": n,
    }
    assert journal_state(store) == (n, 1)
    with closing(sqlite3.connect(store)) as conn:
        ids = {row[0] for row in conn.execute("SELECT passage_id FROM passages")}
    assert ids == {f"doc{i}#{k}" for i in range(1, n + 1) for k in range(3)}


def beir_with_bad_line(tmp_path: Path) -> Path:
    folder = tmp_path / "beir"
    folder.mkdir()
    rows = [
        {"_id": f"d{i}", "title": f"T{i}", "text": f"Sentence number {i} here."}
        for i in range(1, 21)
    ]
    del rows[16]["_id"]  # line 17
    (folder / "corpus.jsonl").write_text("".join(json.dumps(r) + "\n" for r in rows))
    return folder


def test_malformed_record_exits_nonzero_and_keeps_earlier_records(tmp_path: Path) -> None:
    folder = beir_with_bad_line(tmp_path)
    corpus = tmp_path / "corpus"
    result = sciera("ingest", str(folder), "--corpus", str(corpus))
    assert result.returncode == 2
    assert f"{folder.resolve() / 'corpus.jsonl'}:17: _id: missing" in result.stderr
    assert "rerun with --skip-bad" in result.stderr
    assert result.stderr.count("\n") == 1 and "Traceback" not in result.stderr
    assert store_counts(corpus / "store.sqlite")["documents"] == 16


def test_skip_bad_writes_a_report(tmp_path: Path) -> None:
    folder = beir_with_bad_line(tmp_path)
    corpus = tmp_path / "corpus"
    result = sciera("ingest", str(folder), "--corpus", str(corpus), "--skip-bad")
    assert result.returncode == 0, result.stderr
    assert "19 documents added, 0 updated, 0 unchanged; 19 passages; 1 skipped" in result.stdout
    match = re.search(r"skipped records are listed in (\S+)", result.stderr)
    assert match, result.stderr
    report = Path(match.group(1))
    assert report.parent == corpus and report.name.startswith("ingest-report-")
    [entry] = [json.loads(line) for line in report.read_text().splitlines()]
    assert (entry["record"], entry["field"], entry["problem"]) == (17, "_id", "missing")
    assert store_counts(corpus / "store.sqlite")["documents"] == 19


def test_record_with_empty_title_and_text_names_the_fix(tmp_path: Path) -> None:
    """Cranfield holds such records: the error says why and how to skip them, and the
    --skip-bad summary counts them."""
    rows = [
        {"_id": "d1", "title": "T", "text": "Some text."},
        {"_id": "d2", "title": "", "text": ""},
    ]
    file = tmp_path / "cran.jsonl"  # a BEIR-style file under another name: "_id" is the id
    file.write_text("".join(json.dumps(r) + "\n" for r in rows))
    result = sciera("ingest", str(file), "--corpus", str(tmp_path / "c"))
    assert result.returncode == 2
    assert (
        f"{file.resolve()}:2: text: empty, and so is the title: nothing to index" in result.stderr
    )
    assert "rerun with --skip-bad" in result.stderr
    assert "'_id' is used as the document id" in result.stderr
    ok = sciera("ingest", str(file), "--corpus", str(tmp_path / "c"), "--skip-bad")
    assert ok.returncode == 0, ok.stderr
    # the record before the bad one was kept by the failed run; the rerun resumes after it
    assert "1 skipped; 1 records already ingested" in ok.stdout
