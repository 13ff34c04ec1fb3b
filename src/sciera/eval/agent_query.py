"""One question through an agent pipeline (``agent:`` in an experiment), logged like the
runner's other pipelines so every metric, report and paired test reads it unchanged:

- ``first``: every passage the agent saw over all its searches, at the dataset's unit
  (documents via Max-P), in the order first seen; ranking metrics score this list, and
  ``evidence_recall`` is its recall with no cutoff (the share of the judged documents
  retrieved over all calls);
- ``agent``: search calls, steps, distinct queries and why the run stopped; the record
  metrics ``search_calls`` and ``completion`` read it;
- ``answer`` (its final answer step is the answering pipeline's), and ``trace``: every
  step, written to ``traces.jsonl``; the runner adds judges and ``cost`` (one ``agent``
  stage: seconds and LLM tokens).
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

from sciera.pipeline import answer_json
from sciera.types import document_of

if TYPE_CHECKING:
    from sciera.research.trace import Run


def seen_ranking(run: Run, unit: str) -> list[list[Any]]:
    """``[[id, score], ...]``: what the agent's searches returned, in the order first seen
    (a passage counts for its document at the document unit, as Max-P counts it; scores
    count down from the number of ids, so the order survives trec_eval's)."""
    ids: dict[str, None] = {}
    for step in run.steps:
        if step.action == "search":
            for pid in step.result_ids:
                ids.setdefault(document_of(pid) if unit == "document" else pid)
    n = len(ids)
    return [[d, float(n - i)] for i, d in enumerate(ids)]


def agent_summary(run: Run) -> dict[str, Any]:
    queries = {s.query.casefold() for s in run.steps if s.action == "search"}
    return {
        "search_calls": run.search_calls,
        "steps": len(run.steps),
        "distinct_queries": len(queries),
        "stopped_by": run.stopped_by,
    }


def agent_record(run: Run, unit: str) -> dict[str, Any]:
    """The record fields of one agent run (the runner adds qid, setting, input, cost,
    judges)."""
    return {
        "first": seen_ranking(run, unit),
        "agent": agent_summary(run),
        "answer": answer_json(run.answer, trace=False),
        "trace": [s.to_dict() for s in run.steps],
    }
