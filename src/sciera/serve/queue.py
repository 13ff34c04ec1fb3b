"""The admission gate of LLM work: one job runs, a bounded number wait, the rest are refused.

One embedded LLM serves every request, and it answers one prompt at a time. Requests that
need it (``/v1/ask``, an LLM reranker in ``/v1/rerank``) pass :class:`LLMGate`:

    gate = LLMGate(max_waiting=4)
    result = await gate.run(job)      # job(cancelled: threading.Event) runs in a worker thread

- at most one job runs at a time, at most ``max_waiting`` wait (first come, first served);
  one more is refused at once with :class:`QueueFull`, which carries a ``Retry-After``
  estimate (the mean job time so far times the jobs ahead), never an unbounded wait;
- a caller cancelled while waiting (its client disconnected) leaves the queue, and its job
  never starts;
- a caller cancelled while its job runs sets the job's ``cancelled`` event; the job checks
  it between stages (:func:`checkpoint`) and stops. A thread cannot be killed, so the slot
  is held until the thread has really ended: two jobs never share the LLM.

The gate belongs to the event loop that uses it (uvicorn runs one); its state is touched only
from that loop, so it needs no lock.
"""

from __future__ import annotations

import math
import threading
import time
from collections import deque
from collections.abc import AsyncIterator, Awaitable, Callable, MutableMapping
from contextlib import asynccontextmanager
from typing import Any, TypeVar

import anyio
import anyio.lowlevel
import anyio.to_thread

T = TypeVar("T")
Receive = Callable[[], Awaitable[MutableMapping[str, Any]]]


class QueueFull(Exception):
    """The LLM is busy and the waiting line is full; retry after ``retry_after`` seconds."""

    def __init__(self, waiting: int, retry_after: int) -> None:
        self.waiting, self.retry_after = waiting, retry_after
        super().__init__(
            f"the LLM queue is full (1 running, {waiting} waiting); retry in {retry_after} s"
        )


class Cancelled(Exception):
    """Raised inside a job whose caller has gone (see :func:`checkpoint`)."""


def checkpoint(cancelled: threading.Event) -> None:
    """Stop the job (raise :class:`Cancelled`) when its caller has gone."""
    if cancelled.is_set():
        raise Cancelled("the client went away")


class LLMGate:
    """One running LLM job, at most ``max_waiting`` waiting, the rest refused."""

    def __init__(self, max_waiting: int = 4, *, first_estimate: float = 10.0) -> None:
        if max_waiting < 0:
            raise ValueError(f"max_waiting must be >= 0, got {max_waiting}")
        self.max_waiting = max_waiting
        self._busy = False
        self._waiters: deque[anyio.Event] = deque()
        self._mean_seconds = first_estimate

    @property
    def running(self) -> int:
        return int(self._busy)

    @property
    def waiting(self) -> int:
        return len(self._waiters)

    def retry_after(self) -> int:
        """Seconds until a slot is likely free: mean job time x (jobs ahead), 1 .. 3600."""
        ahead = self.running + self.waiting
        return min(3600, max(1, math.ceil(self._mean_seconds * max(ahead, 1))))

    def check(self) -> None:
        """Raise :class:`QueueFull` if a job arriving now would be refused."""
        if self._busy and len(self._waiters) >= self.max_waiting:
            raise QueueFull(len(self._waiters), self.retry_after())

    @asynccontextmanager
    async def slot(self) -> AsyncIterator[None]:
        """Hold the LLM for the body of the ``async with``; wait for it or raise QueueFull."""
        self.check()
        if self._busy:
            turn = anyio.Event()
            self._waiters.append(turn)
            try:
                await turn.wait()
            except BaseException:
                if turn in self._waiters:
                    self._waiters.remove(turn)
                else:  # the slot was handed over just as the caller left: pass it on
                    self._hand_over()
                raise
        else:
            self._busy = True
        start = time.monotonic()
        try:
            yield
        finally:
            self._mean_seconds = 0.7 * self._mean_seconds + 0.3 * (time.monotonic() - start)
            self._hand_over()

    def _hand_over(self) -> None:
        if self._waiters:
            self._waiters.popleft().set()  # still busy: the next waiter owns the slot now
        else:
            self._busy = False

    async def run(self, job: Callable[[threading.Event], T]) -> T:
        """Wait for the slot, then ``job(cancelled)`` in a worker thread; its result."""
        async with self.slot():
            return await run_in_worker(job)


async def run_in_worker(job: Callable[[threading.Event], T]) -> T:
    """``job(cancelled)`` in anyio's worker threads. If the caller is cancelled meanwhile,
    ``cancelled`` is set and this returns (raising the cancellation) once the thread ends."""
    cancelled = threading.Event()
    result: list[T] = []
    error: list[Exception] = []
    async with anyio.create_task_group() as tg:
        tg.start_soon(_set_when_cancelled, cancelled)
        try:
            result.append(await anyio.to_thread.run_sync(job, cancelled))
        except Exception as exc:  # raised below, outside the task group (no ExceptionGroup)
            error.append(exc)
        tg.cancel_scope.cancel()
    if error:
        await anyio.lowlevel.checkpoint_if_cancelled()  # a gone caller: its cancellation wins
        raise error[0]
    return result[0]


async def _set_when_cancelled(flag: threading.Event) -> None:
    try:
        await anyio.sleep_forever()
    finally:  # cancelled: by the caller's cancellation, or because the job is done
        flag.set()


async def unless_disconnected(receive: Receive, work: Callable[[], Awaitable[T]]) -> T | None:
    """``await work()``, cancelled when the HTTP client disconnects first (then None).

    ``receive`` is the request's ASGI receive channel with the body already read: its next
    message is ``http.disconnect``, when the client leaves or the response has been sent.
    """
    result: list[T] = []
    error: list[Exception] = []
    async with anyio.create_task_group() as tg:

        async def watch() -> None:
            while (await receive())["type"] != "http.disconnect":
                pass
            tg.cancel_scope.cancel()

        tg.start_soon(watch)
        try:
            result.append(await work())
        except Exception as exc:
            error.append(exc)
        tg.cancel_scope.cancel()
    if error:
        raise error[0]
    return result[0] if result else None
