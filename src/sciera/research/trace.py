"""What a research run records: one :class:`Step` per agent turn and a :class:`Run`
summary, written as JSONL (one line per step, then the final line) and printable.

A step keeps the thought, the action, the raw and rewritten query (and which text each
retrieval stage got), the result ids and scores, passages the injection guard flagged,
the observation's size, tokens and seconds.
"""

from __future__ import annotations

import json
from collections.abc import Mapping, Sequence
from dataclasses import asdict, dataclass, field
from pathlib import Path
from typing import Any

from sciera.types import Answer, to_plain

STOP_REASONS: tuple[str, ...] = (
    "answer",
    "max_steps",
    "budget_tokens",
    "wall_time",
    "malformed_action",
    "no_progress",
)


@dataclass(frozen=True, slots=True)
class Step:
    step: int  # 1-based
    action: str  # search | get_document | answer | malformed
    thought: str = ""
    query: str = ""  # the agent's raw query
    question: str = ""  # the Q2Q rewrite ("" when none was made)
    q2q_used: bool = False
    q2q_reason: str = ""  # why the raw query was used
    first_stage_query: str = ""
    rerank_query: str = ""
    routing_note: str = ""
    doc_id: str = ""
    result_ids: tuple[str, ...] = ()
    scores: tuple[float, ...] = ()
    flagged: Mapping[str, Sequence[str]] = field(default_factory=dict)
    note: str = ""  # what the agent was told instead of results (a repeat, a bad id ...)
    error: str = ""  # the parse error of a malformed reply (also a repaired one)
    repaired: bool = False
    prompt_tokens: int = 0
    completion_tokens: int = 0
    seconds: float = 0.0

    def to_dict(self) -> dict[str, Any]:
        return {"type": "step", **to_plain(asdict(self))}


@dataclass(frozen=True, slots=True)
class Run:
    """One research run: the answer, why it stopped, and every step."""

    question: str
    answer: Answer
    stopped_by: str
    steps: tuple[Step, ...]
    search_calls: int
    prompt_tokens: int
    completion_tokens: int
    seconds: float
    settings: Mapping[str, Any] = field(default_factory=dict)

    @property
    def partial(self) -> bool:
        """True when a limit or a failure, not the agent, ended the run."""
        return self.stopped_by != "answer"

    def final_dict(self) -> dict[str, Any]:
        from sciera.pipeline import answer_json

        return {
            "type": "final",
            "question": self.question,
            "stopped_by": self.stopped_by,
            "partial": self.partial,
            "steps": len(self.steps),
            "search_calls": self.search_calls,
            "prompt_tokens": self.prompt_tokens,
            "completion_tokens": self.completion_tokens,
            "seconds": self.seconds,
            "settings": to_plain(self.settings),
            "answer": answer_json(self.answer),
        }

    def to_dict(self) -> dict[str, Any]:
        """The whole run as JSON-ready data (``--json``)."""
        return {**self.final_dict(), "trace": [s.to_dict() for s in self.steps]}


def write_trace(run: Run, path: str | Path) -> Path:
    """JSONL: one line per step, then the final line."""
    path = Path(path)
    lines = [s.to_dict() for s in run.steps] + [run.final_dict()]
    path.write_text("".join(json.dumps(x, ensure_ascii=False) + "\n" for x in lines))
    return path


def explain_lines(run: Run) -> list[str]:
    """A readable account of the run, one or more lines per step."""
    out = []
    for s in run.steps:
        head = f"step {s.step}: {s.action}"
        if s.action == "search":
            head += f" {s.query!r}"
            if s.question:
                used = "used" if s.q2q_used else f"not used: {s.q2q_reason}"
                head += f" -> {s.question!r} ({used})"
        elif s.action == "get_document":
            head += f" {s.doc_id}"
        out.append(f"{head}  [{s.prompt_tokens}+{s.completion_tokens} tok, {s.seconds:.1f}s]")
        if s.thought:
            out.append(f"  thought: {s.thought}")
        if s.first_stage_query and s.first_stage_query != s.rerank_query:
            out.append(f"  first stage got {s.first_stage_query!r}, reranker {s.rerank_query!r}")
        if s.routing_note:
            out.append(f"  note: {s.routing_note}")
        for pid, score in zip(s.result_ids, s.scores, strict=True):
            flag = f"  FLAGGED {','.join(s.flagged[pid])}" if pid in s.flagged else ""
            out.append(f"  {score:.3f}  {pid}{flag}")
        if s.note:
            out.append(f"  told: {s.note}")
        if s.error:
            out.append(f"  {'repaired' if s.repaired else 'malformed'}: {s.error}")
    out.append(
        f"stopped by {run.stopped_by} after {len(run.steps)} steps, {run.search_calls} searches, "
        f"{run.prompt_tokens}+{run.completion_tokens} tokens, {run.seconds:.1f}s"
    )
    return out
