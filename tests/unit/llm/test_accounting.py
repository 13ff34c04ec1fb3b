"""Usage accounting per call and per stage."""

from __future__ import annotations

import threading
from concurrent.futures import ThreadPoolExecutor

import pytest

from sciera.llm.accounting import DEFAULT_STAGE, UsageTracker, bind, current_stage, stage


def test_stage_context_nests_and_restores() -> None:
    assert current_stage() == DEFAULT_STAGE
    with stage("deepera.intent"):
        assert current_stage() == "deepera.intent"
        with stage("deepera.assess"):
            assert current_stage() == "deepera.assess"
        assert current_stage() == "deepera.intent"
    assert current_stage() == DEFAULT_STAGE
    with pytest.raises(ValueError), stage(""):
        pass


def test_record_totals_and_by_stage() -> None:
    tracker = UsageTracker()
    with stage("deepera.assess"):
        tracker.record(None, 100, 1, 0.5, cached=False, failed=False)
        tracker.record(None, 0, 0, 0.001, cached=True, failed=False)
    tracker.record("generate", 300, 40, 2.0, cached=None, failed=True)
    tracker.record(None, 10, 5, 0.1, cached=False, failed=False)
    usage = tracker.snapshot()
    assert (usage.calls, usage.prompt_tokens, usage.completion_tokens) == (4, 410, 46)
    assert usage.seconds == pytest.approx(2.601)
    assert (usage.cache_hits, usage.cache_misses, usage.failures) == (1, 2, 1)
    assert usage.by_stage["deepera.assess"] == {
        "calls": 2,
        "prompt_tokens": 100,
        "completion_tokens": 1,
        "seconds": pytest.approx(0.501),
        "cache_hits": 1,
        "cache_misses": 1,
        "failures": 0,
    }
    assert usage.by_stage["generate"]["failures"] == 1
    assert usage.by_stage["generate"]["cache_misses"] == 0  # not cacheable: neither
    assert usage.by_stage[DEFAULT_STAGE]["calls"] == 1


def test_snapshot_is_a_copy_and_reset_starts_over() -> None:
    tracker = UsageTracker()
    tracker.record("a", 1, 1, 0.0, cached=False, failed=False)
    snap = tracker.snapshot()
    tracker.record("a", 1, 1, 0.0, cached=False, failed=False)
    assert snap.calls == 1 and snap.by_stage["a"]["calls"] == 1
    old = tracker.reset()
    assert old.calls == 2
    assert tracker.snapshot().calls == 0 and tracker.snapshot().by_stage == {}


def test_threads_count_exactly_and_bind_carries_the_stage() -> None:
    tracker = UsageTracker()

    def work(i: int) -> str:
        tracker.record(None, 2, 1, 0.0, cached=i % 2 == 0, failed=False)
        return current_stage()

    with stage("rerank.pointwise"), ThreadPoolExecutor(8) as pool:
        bound = list(pool.map(bind(work), range(400)))
        unbound = list(pool.map(work, range(100)))
    assert set(bound) == {"rerank.pointwise"}
    assert set(unbound) == {DEFAULT_STAGE}  # plain pool threads do not inherit the stage
    usage = tracker.snapshot()
    assert usage.calls == 500 and usage.prompt_tokens == 1000
    assert usage.by_stage["rerank.pointwise"]["calls"] == 400
    assert usage.by_stage["rerank.pointwise"]["cache_hits"] == 200
    assert usage.by_stage[DEFAULT_STAGE]["calls"] == 100


def test_stage_is_per_thread() -> None:
    seen: list[str] = []
    ready = threading.Event()

    def other() -> None:
        ready.wait()
        seen.append(current_stage())

    t = threading.Thread(target=other)
    t.start()
    with stage("main.only"):
        ready.set()
        t.join()
    assert seen == [DEFAULT_STAGE]
