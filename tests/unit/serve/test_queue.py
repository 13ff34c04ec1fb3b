"""The LLM gate on its own: one job runs, a bounded number wait, a cancelled waiter leaves,
a cancelled runner is told to stop and keeps the slot until its thread ends."""

from __future__ import annotations

import threading
from collections.abc import Callable

import anyio
import pytest

from sciera.serve.queue import Cancelled, LLMGate, QueueFull, checkpoint


async def until(condition: Callable[[], bool], seconds: float = 5.0) -> None:
    with anyio.fail_after(seconds):
        while not condition():
            await anyio.sleep(0.005)


def blocking_job(started: threading.Event, release: threading.Event, log: list[str], name: str):
    def job(cancelled: threading.Event) -> str:
        log.append(name)
        started.set()
        release.wait(5)
        return name

    return job


def test_full_gate_refuses_at_once_with_a_retry_estimate():
    async def main() -> None:
        gate = LLMGate(max_waiting=1, first_estimate=4.0)
        started, release, log = threading.Event(), threading.Event(), []
        async with anyio.create_task_group() as tg:
            tg.start_soon(gate.run, blocking_job(started, release, log, "a"))
            await until(started.is_set)
            tg.start_soon(gate.run, blocking_job(threading.Event(), release, log, "b"))
            await until(lambda: gate.waiting == 1)
            with pytest.raises(QueueFull) as full:
                await gate.run(blocking_job(threading.Event(), release, log, "c"))
            assert full.value.retry_after == 8  # 4 s a job x (1 running + 1 waiting)
            release.set()
        assert log == ["a", "b"] and (gate.running, gate.waiting) == (0, 0)

    anyio.run(main)


def test_zero_waiting_means_only_the_running_job():
    async def main() -> None:
        gate = LLMGate(max_waiting=0)
        gate.check()  # idle: a job would run
        started, release = threading.Event(), threading.Event()
        async with anyio.create_task_group() as tg:
            tg.start_soon(gate.run, blocking_job(started, release, [], "a"))
            await until(started.is_set)
            with pytest.raises(QueueFull):
                gate.check()
            release.set()

    anyio.run(main)


def test_a_cancelled_waiter_leaves_the_queue_and_never_runs():
    async def main() -> None:
        gate = LLMGate(max_waiting=2)
        started, release, log = threading.Event(), threading.Event(), []
        async with anyio.create_task_group() as tg:
            tg.start_soon(gate.run, blocking_job(started, release, log, "a"))
            await until(started.is_set)
            tg.start_soon(gate.run, blocking_job(threading.Event(), release, log, "b"))
            await until(lambda: gate.waiting == 1)
            with anyio.CancelScope() as waiter:  # the client of "c" disconnects while waiting
                waiter.deadline = anyio.current_time() + 0.05
                await gate.run(blocking_job(threading.Event(), release, log, "c"))
            assert waiter.cancelled_caught and gate.waiting == 1
            await anyio.sleep(0.05)
            assert log == ["a"]  # "b" still waits for "a": leaving did not free the slot
            tg.start_soon(gate.run, blocking_job(threading.Event(), release, log, "d"))
            await until(lambda: gate.waiting == 2)
            release.set()
        assert log == ["a", "b", "d"] and gate.running == 0

    anyio.run(main)


def test_a_cancelled_runner_is_told_to_stop_and_holds_the_slot_until_its_thread_ends():
    seen: list[str] = []
    may_finish = threading.Event()

    def cooperative(cancelled: threading.Event) -> str:
        seen.append("started")
        assert cancelled.wait(5)  # the caller went away
        may_finish.wait(5)  # a stage still finishing
        seen.append("stopping")
        checkpoint(cancelled)
        seen.append("not reached")
        return "done"

    async def main() -> None:
        gate = LLMGate(max_waiting=1)
        caller = anyio.CancelScope()

        async def call() -> None:
            with caller:
                await gate.run(cooperative)

        async with anyio.create_task_group() as tg:
            tg.start_soon(call)
            await until(lambda: seen == ["started"])
            caller.cancel()  # the client disconnects while its job runs
            await anyio.sleep(0.05)
            assert gate.running == 1  # the thread is still in its stage: the slot is held
            may_finish.set()
            await until(lambda: gate.running == 0)
        assert caller.cancelled_caught  # the job's Cancelled did not escape as an error
        assert seen == ["started", "stopping"]

    anyio.run(main)


def test_job_errors_come_back_unwrapped():
    def broken(cancelled: threading.Event) -> None:
        raise Cancelled("stopped")

    async def main() -> None:
        gate = LLMGate()
        with pytest.raises(Cancelled, match="stopped"):
            await gate.run(broken)
        assert gate.running == 0

    anyio.run(main)
