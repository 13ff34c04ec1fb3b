"""Scale-out behind one protocol: map a task over shards, in this process or on a cluster.

    task = EvalTask(exp, settings, data)          # picklable: what every worker needs
    for i, records in executor.map(task, shards): # (shard index, result), as they finish
        log(records)

A :class:`ShardTask` is a picklable description of the work; its :meth:`~ShardTask.setup`
runs once per worker (loading models, opening stores) and returns the function that
turns one shard into its result. An executor keeps the workers of the task it last ran,
so mapping the same task object again (the next pipeline of an experiment, the second
step of a dataset build) reuses them. The code that fans out (``datasets``, ``train``,
``eval``) cuts the shards (``executor.shard_size`` items each: the most a killed worker or
driver loses), logs each result as it arrives, and so resumes the same way whichever
executor ran it. :class:`LocalExecutor` runs here; :class:`sciera.scale.executor.RayExecutor`
runs the same tasks on a Ray cluster, and the CLI builds it from ``--ray``.
"""

from __future__ import annotations

from collections.abc import Callable, Iterable, Iterator
from typing import Any, Protocol, TypeVar

from sciera.errors import ScieraError

S = TypeVar("S")
R = TypeVar("R")


class ShardTask(Protocol[S, R]):
    """Work over shards: picklable (a cluster sends it to every worker)."""

    def setup(self, threads: int | None) -> Callable[[S], R]:
        """This worker's shard function, built once per worker (models load here).
        ``threads``: the CPUs (model threads) the worker holds, ``None`` in this process
        (keep the settings' own)."""
        ...


class Executor(Protocol):
    """Runs a :class:`ShardTask` over shards; results come as ``(shard index, result)``
    as shards finish (not necessarily in order)."""

    @property
    def shard_size(self) -> int:
        """Items per shard the caller cuts (the most a killed worker or driver loses)."""
        ...

    def map(
        self,
        task: ShardTask[S, R],
        shards: Iterable[S],
        *,
        stop: Callable[[], bool] | None = None,
    ) -> Iterator[tuple[int, R]]:
        """Each shard's result; no new shard starts once ``stop()`` says so (those
        started still finish). Shards are read lazily, as workers free up."""
        ...

    def close(self) -> None:
        """Release the workers (and any cluster connection this executor opened)."""
        ...


class LocalExecutor:
    """Runs every shard here, in order, with one worker (the default executor)."""

    def __init__(self, shard_size: int = 16) -> None:
        if shard_size < 1:
            raise ScieraError(f"shard size must be at least 1, got {shard_size}")
        self._shard_size = shard_size
        self._task: Any = None
        self._worker: Callable[[Any], Any] | None = None

    @property
    def shard_size(self) -> int:
        return self._shard_size

    def map(
        self,
        task: ShardTask[S, R],
        shards: Iterable[S],
        *,
        stop: Callable[[], bool] | None = None,
    ) -> Iterator[tuple[int, R]]:
        if self._worker is None or self._task is not task:
            self.close()  # one task's worker at a time: free the previous one's models first
            self._worker = task.setup(None)
            self._task = task
        worker = self._worker
        for i, shard in enumerate(shards):
            if stop is not None and stop():
                break
            yield i, worker(shard)

    def close(self) -> None:
        self._task = self._worker = None

    def __enter__(self) -> LocalExecutor:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()


def shards_of(items: list[Any], size: int) -> list[list[Any]]:
    """``items`` cut into consecutive shards of at most ``size``."""
    return [items[i : i + size] for i in range(0, len(items), size)]
