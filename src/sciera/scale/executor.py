"""The :class:`~sciera.executor.Executor` on a Ray cluster (``--ray ADDRESS``).

    with RayExecutor(RayOptions("auto", shard_size=16)) as executor:
        run_experiment(exp, out, executor=executor)

One actor per worker (``options.workers``, default: the cluster's CPUs divided by
``cpus_per_worker``), each holding ``cpus_per_worker`` CPUs and as many torch threads,
runs the task's :meth:`~sciera.executor.ShardTask.setup` once and then whole shards; at
most one shard per actor is in flight (back-pressure: the driver reads shards only as
actors free up). The task travels once through Ray's object store. A killed actor is
restarted and its shard retried (twice); a killed driver loses at most the shards in
flight, which the caller's logs then miss. The cluster is joined on the first
:meth:`~RayExecutor.map` (nothing to do, no cluster) and left on :meth:`~RayExecutor.close`;
the actors live while the same task object is mapped again, and are replaced for another
task. Paths the task names (corpus, output folder, ``SCIERA_HOME``) must be the same on
every node.
"""

from __future__ import annotations

from collections.abc import Callable, Iterable, Iterator
from contextlib import ExitStack
from typing import Any, TypeVar

from sciera.executor import ShardTask
from sciera.scale.options import RayOptions

S = TypeVar("S")
R = TypeVar("R")


def _actor_class(ray: Any) -> Any:
    @ray.remote(max_restarts=2, max_task_retries=2)
    class TaskActor:
        def __init__(self, task: Any, threads: int) -> None:
            try:
                import torch
            except ImportError:  # a task without torch models
                pass
            else:
                torch.set_num_threads(threads)
            self.work = task.setup(threads)

        def run(self, index: int, shard: Any) -> tuple[int, Any]:
            return index, self.work(shard)

    return TaskActor


class RayExecutor:
    """Shards on a Ray cluster's actors (see the module)."""

    def __init__(self, options: RayOptions) -> None:
        self.options = options
        self._cluster = ExitStack()  # the connection, while open
        self._ray: Any = None
        self._task: Any = None
        self._pool: Any = None  # a ShardPool of the task's actors

    @property
    def shard_size(self) -> int:
        return self.options.shard_size

    def map(
        self,
        task: ShardTask[S, R],
        shards: Iterable[S],
        *,
        stop: Callable[[], bool] | None = None,
    ) -> Iterator[tuple[int, R]]:
        from sciera.scale.cluster import stream

        pool = self._pool_for(task)
        finished = False
        try:
            yield from stream(pool, enumerate(shards), stop or (lambda: False))
            finished = True
        finally:
            if not finished:  # the caller stopped reading: results still in flight
                self._release()

    def _pool_for(self, task: Any) -> Any:
        if self._pool is not None and self._task is task:
            return self._pool
        self._release()  # another task: its actors hold other models
        if self._ray is None:
            from sciera.scale.cluster import ray_cluster

            self._ray = self._cluster.enter_context(ray_cluster(self.options.address))
        from sciera.scale.cluster import ShardPool, worker_cpus

        ray = self._ray
        n = self.options.actors(worker_cpus(ray))
        cpus = self.options.cpus_per_worker
        actor = _actor_class(ray).options(num_cpus=cpus)
        ref = ray.put(task)  # once into the object store, not once per actor
        self._pool = ShardPool(ray, [actor.remote(ref, cpus) for _ in range(n)], "run")
        self._task = task
        return self._pool

    def _release(self) -> None:
        if self._pool is not None:
            self._pool.stop()  # before the connection closes (ShardPool)
        self._pool, self._task = None, None

    def close(self) -> None:
        self._release()
        self._ray = None
        self._cluster.close()

    def __enter__(self) -> RayExecutor:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()
