"""``kill -9`` at generated points of ``ingest`` and ``index``, then the same command again.

Ingest runs in a child process over 1,000 documents in batches of 25 and is killed (SIGKILL)
after a generated number of committed batches plus a generated delay; the re-run must leave
the store exactly as an uninterrupted run does (same documents, passages and fingerprint,
journal complete). Index (BM25) is killed after a generated delay; opening a retriever then
either works or says to re-run ``sciera index`` on one line, and after the re-run a search
ranks as on the uninterrupted index. Each example starts a Python process (about a second),
so the default tier runs a few examples and the ``nightly`` twin many.
"""

from __future__ import annotations

import json
import os
import shutil
import signal
import sqlite3
import subprocess
import sys
import time
from pathlib import Path

import pytest
from hypothesis import strategies as st

from fuzz_tiers import tiered
from sciera.corpus import PassageStore, ingest
from sciera.errors import ScieraError
from sciera.retrieve.build import build_indexes
from sciera.retrieve.open import open_retriever
from sciera.settings import load_settings

N, BATCH, WORDS = 1000, 25, 20
INGEST = (
    "import sys; from sciera.corpus import ingest; "
    f"ingest(sys.argv[1], sys.argv[2], max_words={WORDS}, batch_size={BATCH})"
)
INDEX = (
    "import sys; from sciera.retrieve.build import build_indexes; "
    "build_indexes(sys.argv[1], which=['bm25'])"
)


def write_docs(path: Path) -> Path:
    rows = (
        {"id": f"d{i}", "title": f"Paper {i}", "text": f"Topic {i % 13} finding {i}. Method {i}."}
        for i in range(N)
    )
    path.write_text("".join(json.dumps(r) + "\n" for r in rows))
    return path


def journal_last(store_file: Path) -> int:
    if not store_file.exists():
        return 0
    try:
        with sqlite3.connect(f"file:{store_file}?mode=ro", uri=True, timeout=1) as conn:
            row = conn.execute("SELECT MAX(last_record) FROM journal").fetchone()
    except sqlite3.Error:
        return 0
    return int(row[0] or 0)


def state(corpus: Path) -> tuple[int, int, str]:
    with PassageStore.open(corpus) as store:
        return store.count_documents(), store.count_passages(), store.fingerprint()


@pytest.fixture(scope="module")
def baseline(tmp_path_factory: pytest.TempPathFactory) -> tuple[Path, Path]:
    """The input file and the uninterrupted corpus (ingested and BM25-indexed)."""
    root = tmp_path_factory.mktemp("baseline")
    data = write_docs(root / "docs.jsonl")
    ingest(data, root / "corpus", max_words=WORDS, batch_size=BATCH)
    build_indexes(root / "corpus", load_settings(), which=["bm25"])
    return data, root / "corpus"


def child(code: str, *args: Path) -> subprocess.Popen[bytes]:
    return subprocess.Popen(
        [sys.executable, "-c", code, *map(str, args)],
        stdout=subprocess.DEVNULL,
        stderr=subprocess.DEVNULL,
        env={**os.environ, "PYTHONPATH": os.pathsep.join(sys.path)},
    )


def kill(proc: subprocess.Popen[bytes]) -> None:
    if proc.poll() is None:
        proc.send_signal(signal.SIGKILL)
    proc.wait(30)


@tiered(default=3, nightly=40, batches=st.integers(0, 30), delay=st.floats(0, 0.05))
def test_ingest_killed_anywhere_resumes_to_the_uninterrupted_store(
    baseline: tuple[Path, Path],
    tmp_path_factory: pytest.TempPathFactory,
    batches: int,
    delay: float,
) -> None:
    data, done = baseline
    corpus = tmp_path_factory.mktemp("killed") / "corpus"
    proc = child(INGEST, data, corpus)
    try:
        deadline = time.monotonic() + 60
        while journal_last(corpus / "store.sqlite") < batches * BATCH:
            assert time.monotonic() < deadline and proc.poll() is None
            time.sleep(0.002)
        time.sleep(delay)
    finally:
        kill(proc)
    report = ingest(data, corpus, max_words=WORDS, batch_size=BATCH)
    assert report.resumed_after % BATCH == 0 or report.resumed_after == N
    assert report.resumed_after + report.records == N or report.records == 0
    assert state(corpus) == state(done)


# the child imports for about 0.3 s and builds the index by about 0.8 s on this machine
@tiered(default=3, nightly=40, delay=st.floats(0.2, 1.0))
def test_index_killed_anywhere_is_refused_or_sound_and_a_rerun_repairs_it(
    baseline: tuple[Path, Path], tmp_path_factory: pytest.TempPathFactory, delay: float
) -> None:
    _, done = baseline
    corpus = tmp_path_factory.mktemp("index-killed") / "corpus"
    shutil.copytree(done, corpus, ignore=shutil.ignore_patterns("index"))
    settings = load_settings()
    expected = open_retriever(done, "bm25", settings).search("topic 5 finding", 10)
    proc = child(INDEX, corpus)
    try:
        time.sleep(delay)
    finally:
        kill(proc)
    try:
        retriever = open_retriever(corpus, "bm25", settings)
    except ScieraError as err:
        assert "\n" not in str(err) and "sciera index" in str(err), str(err)
    else:  # the build finished before the kill: it is the whole index
        assert retriever.search("topic 5 finding", 10) == expected
    build_indexes(corpus, settings, which=["bm25"])
    assert open_retriever(corpus, "bm25", settings).search("topic 5 finding", 10) == expected
