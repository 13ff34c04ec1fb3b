"""Build an SSLI dataset's questions and contexts on a Ray cluster (``sciera dataset build
--ray ADDRESS``).

    with SSLIWorkers(RayOptions("auto"), builder) as workers:
        questions = workers.questions(source, items, QALogs(out), llm)  # steps 2-3
        workers.contexts(store, questions, JsonlLog(out / "contexts.jsonl"))  # steps 4-5

One actor per worker holds its own :class:`~sciera.datasets.ssli.builder.SSLIBuilder` on
the same corpus, options and settings (the embedded LLM with ``cpus_per_worker`` threads,
or the settings' OpenAI-compatible server pool; the retriever; the embedder) and makes the
log lines of whole shards with the builder's own per-item code: a passage's
``extract.jsonl`` and ``qa.jsonl`` lines (:meth:`QuestionSource.passage_records`), a
question's ``contexts.jsonl`` line (:meth:`SSLIBuilder.context_record`). Neither depends
on another item, so the lines are those the single-process build writes. The driver
sends only what the logs miss, at most one shard per actor in flight, appends each
finished shard's lines at once, and stops sending passages once the passages before them
give ``--max-questions``; the questions are then put together in passage order exactly as
alone. A killed worker (restarted, its shard retried) or driver loses at most the shards
in flight; a rerun, with or without Ray, makes only what is missing. The corpus directory,
the output folder and ``SCIERA_HOME`` must be at the same paths on every node.
"""

from __future__ import annotations

from contextlib import ExitStack
from typing import Any

from sciera.errors import ScieraError
from sciera.scale.options import RayOptions


def _actor_class(ray: Any) -> Any:
    @ray.remote(max_restarts=2, max_task_retries=2)
    class SSLIActor:
        def __init__(self, corpus: str, out: str, config: Any, settings: Any) -> None:
            import torch

            from sciera.corpus.store import PassageStore
            from sciera.datasets.ssli.builder import SSLIBuilder
            from sciera.datasets.ssli.questions import QuestionSource

            torch.set_num_threads(settings.llm.threads)
            self.builder = SSLIBuilder(corpus, out, config, settings=settings)
            self.store = PassageStore.open(corpus)
            self.source = QuestionSource(
                self.store, config, self.builder.embedder_factory, lambda *_: None
            )

        def model_id(self) -> str:
            return self.builder.llm.model_id

        def passages(self, shard: int, work: list[tuple[dict, tuple[str, ...]]]) -> tuple:
            llm = self.builder.llm
            return shard, [self.source.passage_records(llm, it, miss) for it, miss in work]

        def contexts(self, shard: int, questions: list[dict]) -> tuple[int, list[dict]]:
            return shard, [self.builder.context_record(self.store, q) for q in questions]

    return SSLIActor


class SSLIWorkers:
    """The actors of one ``sciera dataset build --ray`` (a context manager)."""

    def __init__(self, options: RayOptions, builder: Any) -> None:
        self.options, self.builder = options, builder
        self._stack = ExitStack()
        self.pool: Any = None

    def __enter__(self) -> SSLIWorkers:
        from sciera.scale.cluster import actor_pool

        b = self.builder
        llm = b.settings.llm.model_copy(update={"threads": self.options.cpus_per_worker})
        settings = b.settings.model_copy(update={"llm": llm})
        args = (str(b.corpus_dir), str(b.out), b.config, settings)
        with ExitStack() as stack:
            ray, self.pool, actors = stack.enter_context(
                actor_pool(self.options, _actor_class, *args)
            )
            if b.config.uses_llm:
                mine = b.llm.model_id
                for theirs in ray.get([a.model_id.remote() for a in actors]):
                    if theirs != mine:
                        raise ScieraError(
                            f"a Ray worker's LLM ({theirs}) differs from this machine's "
                            f"({mine}): install the same models on every node"
                        )
            self._stack = stack.pop_all()
        return self

    def __exit__(self, *exc: object) -> None:
        self._stack.close()

    def questions(self, source: Any, items: list[dict], logs: Any, llm: Any) -> list[dict]:
        """Steps 2-3 for ``items`` (their missing log lines), then the questions."""
        from sciera.scale.cluster import stream

        mode = source.config.qa_mode
        todo = [(i, it) for i, it in enumerate(items) if logs.missing(it, mode)]
        processed = {i for i, it in enumerate(items) if not logs.missing(it, mode)}
        size = self.options.shard_size
        shards = [todo[k : k + size] for k in range(0, len(todo), size)]

        def prefix() -> int:
            n = 0
            while n < len(items) and n in processed:
                n += 1
            return n

        def enough() -> bool:
            return source.enough(items[: prefix()], logs)

        work = (
            (k, [(logs.with_notes(it), logs.missing(it, mode)) for _, it in shard])
            for k, shard in enumerate(shards)
        )
        for k, results in stream(self.pool, "passages", work, enough):
            for (i, _), lines in zip(shards[k], results, strict=True):
                for name, rec in lines:
                    logs.append(name, rec)
                processed.add(i)
            source.progress("questions", len(processed), len(items))
        return source.assemble(items, logs, llm, report=True)

    def contexts(self, store: Any, questions: list[dict], log: Any) -> None:
        """Steps 4-5: a context line for every question the log misses."""
        from sciera.scale.cluster import stream

        todo = self.builder.contexts_todo(store, questions, log)
        size = self.options.shard_size
        shards = ((k, todo[i : i + size]) for k, i in enumerate(range(0, len(todo), size)))
        done = len(questions) - len(todo)
        for _, records in stream(self.pool, "contexts", shards):
            for rec in records:
                log.append(rec)
            done += len(records)
            self.builder.progress("contexts", done, len(questions))
