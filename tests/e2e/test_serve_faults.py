"""`kill -9` of `sciera serve` in the middle of an ask: the server started again on the same
SCIERA_HOME serves the next search and ask, and the LLM response cache it was writing
passes SQLite's integrity check (a real server on loopback, the 0.5B, a real SciFact
slice). Slow (two server starts and two asks): nightly tier."""

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

pytestmark = [pytest.mark.e2e, pytest.mark.nightly]
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


def test_a_server_killed_mid_ask_comes_back_with_its_cache_sound(
    scifact_slice: Path, gguf_path: Path, tmp_path: Path
) -> None:
    home = tmp_path / "home"
    home.mkdir()
    (home / "models").symlink_to(gguf_path.parent, target_is_directory=True)
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
