"""Write synthetic training queries on a Ray cluster, in shards (``sciera train ...
--synthetic N --ray ADDRESS``).

    made = generate_on_ray(settings, corpus, "hybrid", depth, sources, cache=work /
                           "synthetic.jsonl", style="claim", keep_top=3, options=RayOptions("auto"))

One actor per worker holds the LLM (the embedded model with ``cpus_per_worker`` threads,
or the settings' OpenAI-compatible server), the first stage and the passage store, and
turns whole shards of passages into the records the single-process
:func:`sciera.train.synthetic.generate` logs (the same :class:`QueryWriter`). The driver
sends only the passages missing from the log, at most one shard per actor in flight, and
appends each finished shard's records at once: a killed worker (restarted, its shard
retried) or driver loses at most the shards in flight, and a rerun, with or without Ray,
asks only for what is missing. Every actor's LLM must be the driver's (its model id keys
the log). The corpus directory and ``SCIERA_HOME`` must be at the same paths on every node.
"""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path
from typing import Any

from sciera.errors import ScieraError
from sciera.scale.options import RayOptions

Progress = Callable[[str, int, int], None]


def _actor_class(ray: Any) -> Any:
    @ray.remote(max_restarts=2, max_task_retries=2)
    class SyntheticActor:
        def __init__(
            self, settings: Any, corpus: str, retriever: str, depth: int, style: str, keep: int
        ) -> None:
            import torch

            from sciera.corpus import PassageStore
            from sciera.llm.registry import make_llm
            from sciera.retrieve import open_retriever
            from sciera.retrieve.maxp import MaxPRetriever
            from sciera.train.synthetic import QueryWriter

            threads = settings.llm.threads
            torch.set_num_threads(threads)
            first = MaxPRetriever(open_retriever(corpus, retriever, settings), depth=depth)
            self.writer = QueryWriter(make_llm(settings), first, style, keep)
            self.store = PassageStore.open(corpus)

        def key(self) -> str:
            return self.writer.key

        def run(self, shard: int, passage_ids: list[str]) -> tuple[int, list[dict]]:
            found = self.store.find_passages(passage_ids)
            return shard, [self.writer.record(found[pid]) for pid in passage_ids]

    return SyntheticActor


def generate_on_ray(
    settings: Any,
    corpus: str | Path,
    retriever: str,
    depth: int,
    passage_ids: list[str],
    *,
    key: str,
    cache: Path,
    style: str,
    keep_top: int,
    options: RayOptions,
    progress: Progress | None = None,
) -> dict[str, dict[str, Any]]:
    """Log a record for every passage of ``passage_ids`` missing from ``cache`` (under
    generation ``key``); returns every logged record of ``key`` by passage id."""
    from sciera.corpus import PassageStore
    from sciera.scale.cluster import actor_pool, stream
    from sciera.train.synthetic import append_record, read_done

    done = read_done(cache, key)
    with PassageStore.open(corpus) as store:
        found = store.find_passages(passage_ids)
    todo = [pid for pid in passage_ids if pid not in done and pid in found]
    if not todo:
        return done
    size = options.shard_size
    shards = ((k, todo[i : i + size]) for k, i in enumerate(range(0, len(todo), size)))
    llm = settings.llm.model_copy(update={"threads": options.cpus_per_worker})
    worker_settings = settings.model_copy(update={"llm": llm})
    args = (worker_settings, str(corpus), retriever, depth, style, keep_top)
    with actor_pool(options, _actor_class, *args) as (ray, pool, actors):
        for theirs in ray.get([a.key.remote() for a in actors]):
            if theirs != key:
                raise ScieraError(
                    "a Ray worker's LLM differs from this machine's (another model or prompt "
                    "version): install the same versions and models on every node"
                )
        written = 0
        for _, records in stream(pool, "run", shards):
            for rec in records:
                append_record(cache, done, rec)
            written += len(records)
            if progress is not None:
                progress("synthetic queries", written, len(todo))
    return done
