"""Generated sequences of API calls (Hypothesis state machine): search -> rerank -> ask.

Each step is one request on the same app, with a query taken from what an earlier step
returned (a passage's title or words of its text), or a generated one: search, rerank
(BM25 or DeepEra), ask, verify, and a client that leaves an ask at once. Every answer is a
documented status with the right shape; the invariants after every step: the served corpus
is unchanged (same counts, index not stale), the LLM queue holds no job (within 5 s of a
client leaving), and a search for a known title still finds it first.
"""

from __future__ import annotations

import time
from pathlib import Path
from typing import Any

import pytest
from fastapi.testclient import TestClient
from hypothesis import HealthCheck, settings
from hypothesis import strategies as st
from hypothesis.stateful import Bundle, RuleBasedStateMachine, invariant, rule
from serve_helpers import fuzz_llm, fuzz_settings

from sciera.serve import create_app

STATUSES = {200, 400, 404, 422, 503}
QUERY = st.text(min_size=1, max_size=40).filter(lambda s: s.strip() != "")


def machine(corpus: Path, home: Path) -> type[RuleBasedStateMachine]:
    settings, llm = fuzz_settings(home), fuzz_llm()
    app = create_app(
        {"tiny": corpus}, settings, llm_factory=lambda s: llm, static_dir=home / "no-static"
    )

    class Sequences(RuleBasedStateMachine):
        queries = Bundle("queries")

        def __init__(self) -> None:
            super().__init__()
            self.client = TestClient(app)
            self.corpus_info = self.client.get("/v1/corpora").json()

        def teardown(self) -> None:
            self.client.close()

        def post(self, route: str, body: dict[str, Any]) -> Any:
            r = self.client.post(route, json=body)
            assert r.status_code in STATUSES, (route, body, r.status_code, r.text[:300])
            if r.status_code != 200:
                error = r.json()
                assert list(error) == ["error"] and "\n" not in error["error"], r.text[:300]
                return None
            return r.json()

        @rule(target=queries, query=QUERY | st.sampled_from(["albendazole", "malaria"]))
        def generated(self, query: str) -> str:
            return query

        @rule(target=queries, query=queries, k=st.integers(1, 5))
        def search(self, query: str, k: int) -> str:
            data = self.post("/v1/search", {"query": query, "k": k})
            if data and data["items"]:
                top = data["items"][0]
                assert [i["rank"] for i in data["items"]] == list(range(1, len(data["items"]) + 1))
                return top["title"] or query
            return query

        @rule(query=queries, reranker=st.sampled_from(["bm25", "deepera"]))
        def rerank(self, query: str, reranker: str) -> None:
            data = self.post("/v1/rerank", {"query": query, "reranker": reranker, "k": 2})
            if data is not None:
                assert len(data["items"]) <= 2

        @rule(question=queries)
        def ask(self, question: str) -> None:
            data = self.post("/v1/ask", {"question": question})
            if data is not None:
                assert isinstance(data["text"], str)

        @rule(claim=queries)
        def verify(self, claim: str) -> None:
            data = self.post("/v1/verify", {"claim": claim})
            if data is not None:
                assert data["label"] in {"SUPPORT", "CONTRADICT", "NOT ENOUGH INFO", "CONFLICTING"}

        @rule(question=queries)
        def ask_and_leave(self, question: str) -> None:
            """A streamed ask whose client reads the first event and goes."""
            with self.client.stream(
                "POST", "/v1/ask", json={"question": question, "stream": True}
            ) as r:
                assert r.status_code in STATUSES
                next(r.iter_lines(), None)

        @invariant()
        def corpus_unchanged_and_queue_idle(self) -> None:
            assert self.client.get("/v1/corpora").json() == self.corpus_info
            gate = app.state.gate
            deadline = time.monotonic() + 5  # a left stream's job ends at its next stage
            while (gate.running, gate.waiting) != (0, 0) and time.monotonic() < deadline:
                time.sleep(0.01)
            assert (gate.running, gate.waiting) == (0, 0)

        @invariant()
        def a_known_title_is_found_first(self) -> None:
            data = self.post("/v1/search", {"query": "Albendazole and filariasis", "k": 1})
            assert data["items"][0]["doc_id"] == "a1"

    return Sequences


@pytest.mark.parametrize(
    ("examples", "steps"),
    [(5, 10), pytest.param(200, 30, marks=pytest.mark.nightly, id="nightly")],
)
def test_generated_call_sequences_keep_the_server_consistent(
    corpus: Path, tmp_path: Path, registered: None, examples: int, steps: int
) -> None:
    sequences = machine(corpus, tmp_path)
    sequences.TestCase.settings = settings(
        max_examples=examples,
        stateful_step_count=steps,
        deadline=None,
        derandomize=examples == 5,
        suppress_health_check=list(HealthCheck),
    )
    sequences.TestCase().runTest()
