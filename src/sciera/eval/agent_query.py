"""One question through an agent pipeline (``agent:`` in an experiment), logged like the
runner's other pipelines so every metric, report and paired test reads it unchanged:

- ``first``: every passage the agent saw over all its searches, at the dataset's unit
  (documents via Max-P), in the order first seen; ranking metrics score this list, and
  ``evidence_recall`` is its recall with no cutoff (the share of the judged documents
  retrieved over all calls);
- ``agent``: search calls, steps, distinct queries and why the run stopped; the record
  metrics ``search_calls`` and ``completion`` read it;
- ``answer``, judges and ``cost`` (one ``agent`` stage: seconds and LLM tokens) as for a
  generator; ``trace``: every step, written to ``traces.jsonl``.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

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


def run_agent_query(agent: Any, llm: Any, query: str, unit: str) -> dict[str, Any]:
    """The record fields of one agent run (the caller adds qid, setting, input, judges)."""
    from sciera.eval.runner import answer_record, stage_cost

    cost: dict[str, dict[str, float]] = {}
    with stage_cost(cost, "agent", llm):
        run = agent.run(query)
    return {
        "first": seen_ranking(run, unit),
        "agent": agent_summary(run),
        "answer": answer_record(run.answer),
        "trace": [s.to_dict() for s in run.steps],
        "cost": cost,
    }
