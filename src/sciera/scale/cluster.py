"""Connecting to Ray: ``local`` (start a cluster in this process), ``auto`` (the cluster
``ray start`` runs on this machine) or an address (``HOST:PORT``, ``ray://HOST:10001``)."""

from __future__ import annotations

import socket
from collections.abc import Callable, Iterable, Iterator
from contextlib import contextmanager
from typing import Any

from sciera.errors import ScieraError, require
from sciera.scale.options import RayOptions


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


@contextmanager
def actor_pool(
    options: RayOptions, actor_class: Callable[[Any], Any], *args: Any
) -> Iterator[tuple[Any, Any, list[Any]]]:
    """``(ray, pool, actors)``: one actor per worker (``options``), each made with
    ``args``, holding ``options.cpus_per_worker`` CPUs, in a Ray ``ActorPool``."""
    with ray_cluster(options.address) as ray:
        n = options.actors(worker_cpus(ray))
        actor = actor_class(ray).options(num_cpus=options.cpus_per_worker)
        actors = [actor.remote(*args) for _ in range(n)]
        yield ray, ray.util.ActorPool(actors), actors


def stream(
    pool: Any,
    method: str,
    shards: Iterable[tuple[int, Any]],
    stop: Callable[[], bool] = lambda: False,
) -> Iterator[Any]:
    """Each finished shard's result, as they finish: ``actor.<method>(index, shard)`` with
    at most one shard per actor in flight (back-pressure); no new shard is sent once
    ``stop()`` says so (those in flight still finish)."""
    for i, shard in shards:
        while not pool.has_free():
            yield pool.get_next_unordered()
        if stop():
            break
        pool.submit(lambda a, v: getattr(a, method).remote(*v), (i, shard))
    while pool.has_next():
        yield pool.get_next_unordered()
