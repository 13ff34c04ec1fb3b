"""Generated sequences of API calls (Hypothesis state machine): search -> rerank -> ask.

Each step is one request on the same app, with a query taken from what an earlier step
returned (a passage's title or words of its text), or a generated one: search, rerank
(BM25 or DeepEra), ask, verify, and a client that leaves an ask at once. Every answer is a
documented status with the right shape; the invariants after every step: the served corpus
is unchanged (same counts, index not stale), the LLM queue holds no job (within 5 s of a
client leaving), and a search for a known title still finds it first.
"""

from __future__ import annotations

from pathlib import Path

import pytest
from fastapi.testclient import TestClient
from serve_helpers import fuzz_llm, fuzz_settings

from api_sequences import call_sequences, run_sequences
from sciera.serve import create_app


@pytest.mark.parametrize(
    ("examples", "steps"),
    [(5, 10), pytest.param(200, 30, marks=pytest.mark.nightly, id="nightly")],
)
def test_generated_call_sequences_keep_the_server_consistent(
    corpus: Path, tmp_path: Path, registered: None, examples: int, steps: int
) -> None:
    settings_, llm = fuzz_settings(tmp_path), fuzz_llm()
    app = create_app(
        {"tiny": corpus}, settings_, llm_factory=lambda s: llm, static_dir=tmp_path / "no-static"
    )
    gate = app.state.gate
    sequences = call_sequences(
        lambda: TestClient(app),
        ("Albendazole and filariasis", "a1"),
        queue_idle=lambda: (gate.running, gate.waiting) == (0, 0),
    )
    run_sequences(sequences, examples, steps)
