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

        def run(self, shard: int, work: tuple[str, int, list[str]]) -> tuple[int, list]:
            from sciera.eval.runner import build_stages, run_questions

            pipeline, seed, qids = work
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
        self.pool: Any = None

    def __enter__(self) -> EvalWorkers:
        from sciera.scale.cluster import actor_pool, ray_cluster

        if self.exp.corpus is None and any(p.retriever != "candidates" for p in self.exp.pipelines):
            raise ScieraError("--ray needs the experiment's corpus (a path every node sees)")
        with ExitStack() as stack:
            ray = stack.enter_context(ray_cluster(self.options.address))
            data = ray.put(self.data)
            cpus = self.options.cpus_per_worker
            _, self.pool, _ = stack.enter_context(
                actor_pool(self.options, _actor_class, self.exp, self.settings, data, cpus)
            )
            self._stack = stack.pop_all()
        return self

    def __exit__(self, *exc: object) -> None:
        self._stack.close()

    def run(self, pipeline: str, repeat: int, qids: list[str]) -> Iterator[dict[str, Any]]:
        """Records of ``qids`` for ``pipeline`` repeat ``repeat``, shard by shard as they
        finish (not in ``qids`` order)."""
        from sciera.scale.cluster import stream

        seed = self.exp.seed_of(repeat)
        size = self.options.shard_size
        shards = ((i, (pipeline, seed, qids[i : i + size])) for i in range(0, len(qids), size))
        for _, records in stream(self.pool, "run", shards):
            yield from records
