"""Connecting to Ray: ``local`` (start a cluster in this process), ``auto`` (the cluster
``ray start`` runs on this machine) or an address (``HOST:PORT``, ``ray://HOST:10001``)."""

from __future__ import annotations

import socket
from collections.abc import Callable, Iterable, Iterator
from contextlib import contextmanager
from typing import Any

from sciera.errors import ScieraError, require


def check_reachable(address: str, timeout: float = 10.0) -> None:
    """Fail fast on a ``HOST:PORT`` nobody listens on (Ray itself retries for minutes)."""
    host, sep, port = address.removeprefix("ray://").rpartition(":")
    if not sep or not port.isdigit():
        return
    try:
        socket.create_connection((host or "127.0.0.1", int(port)), timeout=timeout).close()
    except OSError as exc:
        raise ScieraError(
            f"cannot connect to the Ray cluster at {address!r}: {exc.strerror or exc}"
        ) from None


@contextmanager
def ray_cluster(address: str, *, num_cpus: int | None = None) -> Iterator[Any]:
    """The ``ray`` module, connected; a connection opened here is closed on exit."""
    ray = require("ray", "ray")
    opened = not ray.is_initialized()
    if opened and address not in ("local", "auto"):
        check_reachable(address)
    if opened:
        kwargs: dict[str, Any] = {"include_dashboard": False, "log_to_driver": False}
        try:
            if address == "local":
                ray.init(num_cpus=num_cpus, **kwargs)
            else:
                ray.init(address=address, **kwargs)
        except (ConnectionError, RuntimeError, ValueError) as exc:
            first = str(exc).strip().splitlines()[0] if str(exc).strip() else type(exc).__name__
            raise ScieraError(
                f"cannot connect to the Ray cluster at {address!r}: {first}"
            ) from None
    try:
        yield ray
    finally:
        if opened:
            ray.shutdown()


def worker_cpus(ray: Any) -> int:
    """CPUs the cluster offers (at least 1)."""
    return max(1, int(ray.cluster_resources().get("CPU", 1)))


class ShardPool:
    """Shards sent to ``actors`` (``actor.<method>(*args)``), at most one in flight per
    actor, results taken as they finish. It knows what is in flight, so :meth:`stop` can
    wait for it: a task still in flight when the connection closes fails afterwards, Ray
    retries it over the closed connection to the raylet, and then ends the whole process
    ("the local Raylet is dead"), taking a driver that only meant to stop with it."""

    def __init__(self, ray: Any, actors: list[Any], method: str) -> None:
        self._ray, self._method = ray, method
        self._actors, self._idle = list(actors), list(actors)
        self._in_flight: dict[Any, Any] = {}  # ObjectRef -> its actor

    def has_free(self) -> bool:
        return bool(self._idle)

    def has_next(self) -> bool:
        return bool(self._in_flight)

    def submit(self, *args: Any) -> None:
        actor = self._idle.pop()
        self._in_flight[getattr(actor, self._method).remote(*args)] = actor

    def next_unordered(self) -> Any:
        """The next finished shard's result (its task's error is raised here)."""
        (ref,), _ = self._ray.wait(list(self._in_flight), num_returns=1)
        self._idle.append(self._in_flight.pop(ref))
        return self._ray.get(ref)

    def stop(self, timeout: float = 60.0) -> None:
        """Cancel what is in flight (a cancelled task is not retried), kill the actors (no
        restart) and wait until Ray has failed those tasks, so that leaving the cluster
        next is safe; then the pool is empty."""
        refs = list(self._in_flight)
        for ref in refs:  # a cancelled task is not retried on its killed actor
            self._ray.cancel(ref)
        for actor in self._actors:
            self._ray.kill(actor)
        if refs:
            self._ray.wait(refs, num_returns=len(refs), timeout=timeout)
        self._actors, self._idle, self._in_flight = [], [], {}


def stream(
    pool: ShardPool,
    shards: Iterable[tuple[int, Any]],
    stop: Callable[[], bool] = lambda: False,
) -> Iterator[Any]:
    """Each finished shard's result, as they finish: ``(index, shard)`` sent to a free
    actor, at most one shard per actor in flight (back-pressure); no new shard is sent once
    ``stop()`` says so (those in flight still finish)."""
    for i, shard in shards:
        while not pool.has_free():
            yield pool.next_unordered()
        if stop():
            break
        pool.submit(i, shard)
    while pool.has_next():
        yield pool.next_unordered()
