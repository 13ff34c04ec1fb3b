"""Answer an experiment's questions on a Ray cluster, in shards.

    with EvalWorkers(RayOptions("auto", shard_size=16), exp, settings, data) as pool:
        for record in pool.run("deepera", 0, question_ids):
            log.append(record)        # the runner's fsync'd results.jsonl

One actor per worker holds the pipeline it was last asked for (retriever, models, LLM:
the embedded model each actor loads for itself, or an OpenAI-compatible server pool the
settings name) and answers whole shards of questions with the runner's own
:func:`~sciera.eval.runner.run_questions`, so a record is what the single-process run
writes. At most one shard per actor is in flight (back-pressure); the driver logs each
record of a finished shard at once. A killed worker (Ray restarts the actor and retries
its shard) or driver loses at most the shards in flight, and a rerun asks only for the
questions missing from the log. The dataset travels through Ray's object store; the
corpus directory and ``SCIERA_HOME`` (models, caches) must be at the same paths on every
node, as for ``sciera index --ray``.
"""

from __future__ import annotations

from collections.abc import Iterator
from contextlib import ExitStack
from typing import Any

from sciera.errors import ScieraError
from sciera.scale.options import RayOptions


def _actor_class(ray: Any) -> Any:
    @ray.remote(max_restarts=2, max_task_retries=2)
    class EvalActor:
        def __init__(self, exp: Any, settings: Any, data: Any, threads: int) -> None:
            import torch

            from sciera.eval.runner import Retrievers

            torch.set_num_threads(threads)
            llm = settings.llm.model_copy(update={"threads": threads})
            self.exp, self.data = exp, data
            self.settings = settings.model_copy(update={"llm": llm})
            self.retrievers = Retrievers(exp.corpus, self.settings)
            self.built: tuple[tuple[str, int], Any] | None = None  # one pipeline at a time

        def run(self, shard: int, pipeline: str, seed: int, qids: list[str]) -> tuple[int, list]:
            from sciera.eval.runner import build_stages, run_questions

            if self.built is None or self.built[0] != (pipeline, seed):
                self.built = None  # free the previous pipeline's models first
                spec = next(p for p in self.exp.pipelines if p.name == pipeline)
                stages = build_stages(spec, self.exp, self.settings, self.retrievers, seed)
                self.built = ((pipeline, seed), stages)
            records = list(run_questions(self.built[1], self.data, qids, self.settings))
            return shard, records

    return EvalActor


class EvalWorkers:
    """The actors of one ``sciera eval run --ray`` (a context manager: connects, starts
    them, and disconnects on exit)."""

    def __init__(self, options: RayOptions, exp: Any, settings: Any, data: Any) -> None:
        self.options, self.exp, self.settings, self.data = options, exp, settings, data
        self._stack = ExitStack()
        self.ray: Any = None
        self.pool: Any = None
        self.workers = 0

    def __enter__(self) -> EvalWorkers:
        from sciera.scale.cluster import ray_cluster, worker_cpus

        if self.exp.corpus is None and any(p.retriever != "candidates" for p in self.exp.pipelines):
            raise ScieraError("--ray needs the experiment's corpus (a path every node sees)")
        self.ray = self._stack.enter_context(ray_cluster(self.options.address))
        try:
            cpus = self.options.cpus_per_worker
            self.workers = self.options.actors(worker_cpus(self.ray))
            actor = _actor_class(self.ray).options(num_cpus=cpus)
            data = self.ray.put(self.data)
            actors = [
                actor.remote(self.exp, self.settings, data, cpus) for _ in range(self.workers)
            ]
            self.pool = self.ray.util.ActorPool(actors)
        except BaseException:
            self._stack.close()
            raise
        return self

    def __exit__(self, *exc: object) -> None:
        self._stack.close()

    def run(self, pipeline: str, repeat: int, qids: list[str]) -> Iterator[dict[str, Any]]:
        """Records of ``qids`` for ``pipeline`` repeat ``repeat``, shard by shard as they
        finish (not in ``qids`` order)."""
        seed = self.exp.seed_of(repeat)
        size = self.options.shard_size
        shards = [qids[i : i + size] for i in range(0, len(qids), size)]
        for i, shard in enumerate(shards):
            while not self.pool.has_free():
                yield from self._next()
            self.pool.submit(lambda a, v: a.run.remote(*v), (i, pipeline, seed, shard))
        while self.pool.has_next():
            yield from self._next()

    def _next(self) -> Iterator[dict[str, Any]]:
        _, records = self.pool.get_next_unordered()
        yield from records
