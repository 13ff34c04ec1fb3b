"""`kill -9` of `sciera serve` in the middle of an ask: the server started again on the same
SCIERA_HOME serves the next search and ask, and the LLM response cache it was writing
passes SQLite's integrity check (a real server on loopback, the 0.5B, a real SciFact
slice; two server starts and two asks: nightly tier); and `ingest` and `index` into the
corpus a running server reads."""

from __future__ import annotations

import json
import os
import signal
import socket
import sqlite3
import subprocess
import time
import urllib.request
from pathlib import Path

import pytest
from train_cli import sciera_exe

pytestmark = [pytest.mark.e2e]
CLAIM = "Vitamin D deficiency raises the risk of multiple sclerosis."


def start(corpus: Path, home: Path) -> tuple[subprocess.Popen, str]:
    env = {
        **os.environ,
        "SCIERA_HOME": str(home),
        "HF_HUB_OFFLINE": "1",
        "SCIERA_RETRIEVE__RETRIEVER": "bm25",
        "SCIERA_RERANK__DEPTH": "5",
        "SCIERA_LLM__MODEL": "qwen2.5-coder-0.5b-instruct-q4_k_m",
    }
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        port = s.getsockname()[1]
    log = (home / f"serve-{port}.log").open("w")
    proc = subprocess.Popen(
        [sciera_exe(), "serve", "--corpus", str(corpus), "--port", str(port)],
        env=env,
        stdout=log,
        stderr=subprocess.STDOUT,
    )
    url = f"http://127.0.0.1:{port}"
    deadline = time.monotonic() + 120
    while True:
        try:
            with urllib.request.urlopen(url + "/healthz", timeout=2) as r:
                if r.status == 200:
                    return proc, url
        except OSError:
            pass
        assert proc.poll() is None, (home / f"serve-{port}.log").read_text()
        assert time.monotonic() < deadline, "server did not start"
        time.sleep(0.5)


def post(url: str, route: str, body: dict, timeout: float = 600) -> dict:
    req = urllib.request.Request(
        f"{url}/v1/{route}",
        data=json.dumps(body).encode(),
        headers={"Content-Type": "application/json"},
    )
    with urllib.request.urlopen(req, timeout=timeout) as r:
        assert r.status == 200
        return json.loads(r.read())


@pytest.fixture
def home(fresh_home, tmp_path: Path) -> Path:
    """A fresh SCIERA_HOME with the LLM weights and int8 exports linked in."""
    return fresh_home(tmp_path / "home")


@pytest.mark.nightly
def test_a_server_killed_mid_ask_comes_back_with_its_cache_sound(
    scifact_slice: Path, home: Path
) -> None:
    proc, url = start(scifact_slice, home)
    try:
        post(url, "ask", {"question": "Does aspirin lower adenoma risk?"})  # the cache exists
        req = urllib.request.Request(
            f"{url}/v1/ask",
            data=json.dumps({"question": CLAIM, "stream": True}).encode(),
            headers={"Content-Type": "application/json"},
        )
        with urllib.request.urlopen(req, timeout=600) as stream:
            for line in stream:  # the ask is under way: its first stage has ended
                if line.startswith(b"event: retrieved"):
                    break
            os.kill(proc.pid, signal.SIGKILL)
            proc.wait(timeout=30)
    finally:
        if proc.poll() is None:
            proc.kill()
    proc, url = start(scifact_slice, home)
    try:
        found = post(url, "search", {"query": CLAIM, "k": 3})
        assert len(found["items"]) == 3
        answer = post(url, "ask", {"question": CLAIM})
        assert answer["text"] and answer["question"] == CLAIM
    finally:
        proc.terminate()
        proc.wait(timeout=30)
    with sqlite3.connect(home / "llm-cache.sqlite") as conn:
        assert conn.execute("PRAGMA integrity_check").fetchone()[0] == "ok"
        assert conn.execute("SELECT COUNT(*) FROM responses").fetchone()[0] > 0


def test_ingest_and_index_while_serve_holds_the_corpus(
    scifact_slice: Path, home: Path, tmp_path: Path
) -> None:
    """`sciera ingest` and `sciera index` into the corpus a running server reads: both
    finish, every request meanwhile gets an answer or a one-line 4xx (never a 5xx), the
    store stays sound, and the server started again finds the new documents."""
    import shutil
    import urllib.error

    corpus = tmp_path / "corpus"
    shutil.copytree(scifact_slice, corpus)
    extra = tmp_path / "extra.jsonl"
    extra.write_text(
        "".join(
            json.dumps({"_id": f"new{i}", "title": "Quokka study", "text": f"Quokkas {i} thrive."})
            + "\n"
            for i in range(20)
        )
    )
    env = {**os.environ, "SCIERA_HOME": str(home), "HF_HUB_OFFLINE": "1"}

    def search(url: str) -> int:
        try:
            post(url, "search", {"query": "quokka", "k": 3})
            return 200
        except urllib.error.HTTPError as exc:
            body = json.loads(exc.read())
            assert exc.code < 500 and "\n" not in body["error"], body
            return exc.code

    proc, url = start(corpus, home)
    try:
        assert search(url) == 200
        done = subprocess.run(
            [sciera_exe(), "ingest", str(extra), "--corpus", str(corpus)],
            env=env,
            capture_output=True,
            text=True,
            timeout=300,
        )
        assert done.returncode == 0, done.stderr
        search(url)  # a stale index: answered or a one-line 4xx
        done = subprocess.run(
            [sciera_exe(), "index", "--corpus", str(corpus), "--bm25-only"],
            env=env,
            capture_output=True,
            text=True,
            timeout=300,
        )
        assert done.returncode == 0, done.stderr
        search(url)
    finally:
        proc.terminate()
        proc.wait(timeout=30)
    with sqlite3.connect(corpus / "store.sqlite") as conn:
        assert conn.execute("PRAGMA integrity_check").fetchone()[0] == "ok"
    proc, url = start(corpus, home)
    try:
        found = post(url, "search", {"query": "quokka", "k": 3})
        assert all(r["doc_id"].startswith("new") for r in found["items"])
    finally:
        proc.terminate()
        proc.wait(timeout=30)


@pytest.mark.nightly
def test_a_real_server_answers_requests_generated_from_its_schema(
    scifact_slice: Path, home: Path
) -> None:
    """Schemathesis against `sciera serve` on loopback (the 0.5B, bounded counts: the LLM
    routes get a few requests each): every response has a documented status, validates
    against the schema, and every error is one line naming no path."""
    schemathesis = pytest.importorskip("schemathesis")
    from schemathesis import GenerationMode

    from api_fuzzing import generated

    proc, url = start(scifact_slice, home)
    counts = {
        ("GET", "/v1/corpora"): 3,
        ("POST", "/v1/search"): 25,
        ("GET", "/v1/corpora/{name}/documents/{doc_id}"): 25,
        ("POST", "/v1/rerank"): 5,
        ("POST", "/v1/verify"): 3,
        ("POST", "/v1/ask"): 3,
        ("GET", "/healthz"): 2,
    }
    try:
        schema = schemathesis.openapi.from_url(url + "/openapi.json")
        for (method, path), n in counts.items():
            op = schema[path][method]
            generated(op, GenerationMode.POSITIVE, n)
            if method == "POST":
                generated(op, GenerationMode.NEGATIVE, n)
    finally:
        proc.terminate()
        proc.wait(timeout=30)


@pytest.mark.nightly
def test_generated_call_sequences_against_a_real_server(scifact_slice: Path, home: Path) -> None:
    """The in-process state machine (search, rerank, ask, verify, a client leaving a
    stream) against `sciera serve` on loopback with the 0.5B: every answer documented, the
    corpora listing unchanged, a known title found first after every step."""
    httpx = pytest.importorskip("httpx")
    from api_sequences import call_sequences, run_sequences

    proc, url = start(scifact_slice, home)
    try:
        found = post(url, "search", {"query": "vitamin D multiple sclerosis latitude", "k": 1})
        top = found["items"][0]
        sequences = call_sequences(
            lambda: httpx.Client(base_url=url, timeout=600),
            (top["title"], top["doc_id"]),
            words=("vitamin D", "multiple sclerosis", "aspirin"),
        )
        run_sequences(sequences, examples=3, steps=6)
    finally:
        proc.terminate()
        proc.wait(timeout=30)
