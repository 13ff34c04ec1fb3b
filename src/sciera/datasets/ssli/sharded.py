"""Steps 2-5 of an SSLI build in shards on an :class:`~sciera.executor.Executor`'s workers
(``sciera dataset build --ray ADDRESS`` passes the Ray one).

    steps = ShardedSteps(executor, BuildTask(corpus, out, config, settings), builder)
    questions = steps.questions(source, items, QALogs(out), llm)        # steps 2-3
    steps.contexts(store, questions, JsonlLog(out / "contexts.jsonl"))  # steps 4-5

Each worker holds its own :class:`~sciera.datasets.ssli.builder.SSLIBuilder` on the same
corpus, options and settings (:class:`~sciera.datasets.ssli.builder.BuildTask`: the
embedded LLM with the worker's threads, or the settings' OpenAI-compatible server pool; the
retriever; the embedder) and makes the log lines of whole shards with the builder's own
per-item code: a passage's ``extract.jsonl`` and ``qa.jsonl`` lines
(:meth:`QuestionSource.passage_records`), a question's ``contexts.jsonl`` line
(:meth:`SSLIBuilder.context_record`). Neither depends on another item, so the lines are
those the single-process build writes. The driver sends only what the logs miss, appends
each finished shard's lines at once, and stops sending passages once the passages before
them give ``--max-questions``; the questions are then put together in passage order exactly
as alone. A worker whose LLM differs from this machine's is refused before any of its lines
is kept. A killed worker or driver loses at most the shards in flight; a rerun, sharded or
not, makes only what is missing.
"""

from __future__ import annotations

from typing import Any

from sciera.errors import ScieraError
from sciera.executor import Executor, ShardTask, shards_of

PASSAGES = "passages"
CONTEXTS = "contexts"

Lines = list[tuple[str, dict[str, Any]]]
"""One work item's log lines: ``(log name, record)``."""
ShardResult = tuple[str, list[Lines]]
"""A shard's result: the worker's LLM model id (``""`` without an LLM) and each item's lines."""


class ShardedSteps:
    """The questions and contexts of one build, made by ``executor``'s workers."""

    def __init__(
        self, executor: Executor, task: ShardTask[tuple[str, list], ShardResult], builder: Any
    ) -> None:
        self.executor, self.task, self.builder = executor, task, builder

    def _check(self, model_id: str) -> None:
        b = self.builder
        if b.config.uses_llm and model_id != b.llm.model_id:
            raise ScieraError(
                f"a worker's LLM ({model_id}) differs from this machine's "
                f"({b.llm.model_id}): install the same models on every node"
            )

    def questions(self, source: Any, items: list[dict], logs: Any, llm: Any) -> list[dict]:
        """Steps 2-3 for ``items`` (their missing log lines), then the questions."""
        mode = source.config.qa_mode
        todo = [(i, it) for i, it in enumerate(items) if logs.missing(it, mode)]
        processed = {i for i, it in enumerate(items) if not logs.missing(it, mode)}
        shards = shards_of(todo, self.executor.shard_size)

        def prefix() -> int:
            n = 0
            while n < len(items) and n in processed:
                n += 1
            return n

        def enough() -> bool:
            return source.enough(items[: prefix()], logs)

        work = (
            (PASSAGES, [(logs.with_notes(it), logs.missing(it, mode)) for _, it in shard])
            for shard in shards
        )
        for k, (model_id, results) in self.executor.map(self.task, work, stop=enough):
            self._check(model_id)
            for (i, _), lines in zip(shards[k], results, strict=True):
                for name, rec in lines:
                    logs.append(name, rec)
                processed.add(i)
            source.progress("questions", len(processed), len(items))
        return source.assemble(items, logs, llm, report=True)

    def contexts(self, store: Any, questions: list[dict], log: Any) -> None:
        """Steps 4-5: a context line for every question the log misses."""
        todo = self.builder.contexts_todo(store, questions, log)
        shards = ((CONTEXTS, s) for s in shards_of(todo, self.executor.shard_size))
        done = len(questions) - len(todo)
        for _, (model_id, results) in self.executor.map(self.task, shards):
            self._check(model_id)
            for lines in results:
                for _, rec in lines:
                    log.append(rec)
            done += len(results)
            self.builder.progress("contexts", done, len(questions))
