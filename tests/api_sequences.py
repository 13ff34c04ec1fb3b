"""Generated sequences of API calls (a Hypothesis state machine), shared by the in-process
run (tests/unit/serve/test_api_fuzz_stateful.py) and the one against a real `sciera serve`
(tests/e2e/test_serve_faults.py)."""

from __future__ import annotations

import time
from collections.abc import Callable, Sequence
from typing import Any

from hypothesis import HealthCheck, settings
from hypothesis import strategies as st
from hypothesis.stateful import Bundle, RuleBasedStateMachine, invariant, rule

STATUSES = {200, 400, 404, 422, 503}
QUERY = st.text(min_size=1, max_size=40).filter(lambda s: s.strip() != "")


def call_sequences(
    client: Callable[[], Any],
    known: tuple[str, str],
    queue_idle: Callable[[], bool] | None = None,
    words: Sequence[str] = ("albendazole", "malaria"),
) -> type[RuleBasedStateMachine]:
    """A state machine over ``client()`` (a TestClient or an httpx client of a served app):
    search, rerank, ask, verify and a client that leaves an ask, queries drawn from earlier
    answers, ``words`` or generated text. Invariants: the corpora listing never changes,
    ``queue_idle()`` (when given) holds within 5 s, and the title ``known[0]`` finds
    document ``known[1]`` first."""

    class Sequences(RuleBasedStateMachine):
        queries = Bundle("queries")

        def __init__(self) -> None:
            super().__init__()
            self.client = client()
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

        @rule(target=queries, query=QUERY | st.sampled_from(list(words)))
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
            if queue_idle is None:
                return
            deadline = time.monotonic() + 5  # a left stream's job ends at its next stage
            while not queue_idle() and time.monotonic() < deadline:
                time.sleep(0.01)
            assert queue_idle()

        @invariant()
        def a_known_title_is_found_first(self) -> None:
            data = self.post("/v1/search", {"query": known[0], "k": 1})
            assert data["items"][0]["doc_id"] == known[1]

    return Sequences


def run_sequences(sequences: type[RuleBasedStateMachine], examples: int, steps: int) -> None:
    sequences.TestCase.settings = settings(
        max_examples=examples,
        stateful_step_count=steps,
        deadline=None,
        derandomize=examples <= 5,
        suppress_health_check=list(HealthCheck),
    )
    sequences.TestCase().runTest()
