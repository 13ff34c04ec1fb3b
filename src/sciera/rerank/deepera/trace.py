"""The per-question record of every DeepEra decision, JSON-serializable."""

from __future__ import annotations

import json
from dataclasses import asdict, dataclass, field
from typing import Any

from sciera.types import Intent


@dataclass(frozen=True, slots=True)
class PassageTrace:
    """One candidate's path through the agent.

    ``grade_expectation`` is E[grade]/10 from the LLM's 0..10 grade distribution, None
    when the passage was not graded (dropped by the injection guard, or pruned because no
    grade could have kept it); ``calibrated`` is P(relevant) from the calibrator (None
    without one, or not graded); ``score`` is what filtering used (calibrated if
    available, else the raw expectation; for a pruned passage its upper bound).
    """

    passage_id: str
    first_stage_rank: int
    first_stage_score: float
    grade_expectation: float | None
    grade_mass: float  # probability mass the grades had before normalization
    calibrated: float | None
    score: float
    excluded: str = ""
    reason: str = ""  # optional one-line justification from the LLM
    parse_failed: bool = False
    prompt_tokens: int = 0
    completion_tokens: int = 0
    seconds: float = 0.0


@dataclass(frozen=True, slots=True)
class DeepEraTrace:
    query: str
    intent: Intent | None  # None when use_intent is off
    intent_fallback: bool  # the intent call failed; a neutral intent was used
    intent_error: str
    settings: dict[str, Any]  # use_intent, prune_tau, prune_top_k, scorer, ...
    model_id: str  # the grading LLM's ("" with a trained scorer: no LLM grades)
    prompt_versions: dict[str, str]
    score_source: str  # "calibrated:<artifact>" or "raw grade expectation (no calibrator)"
    passages: tuple[PassageTrace, ...]
    prompt_tokens: int
    completion_tokens: int
    seconds: float
    stage_seconds: dict[str, float] = field(default_factory=dict)

    def to_dict(self) -> dict[str, Any]:
        return asdict(self)

    def to_json(self, indent: int | None = 2) -> str:
        return json.dumps(self.to_dict(), indent=indent, ensure_ascii=False)

    @classmethod
    def from_dict(cls, data: dict[str, Any]) -> DeepEraTrace:
        d = dict(data)
        d["intent"] = Intent(**d["intent"]) if d.get("intent") else None
        d["passages"] = tuple(PassageTrace(**p) for p in d["passages"])
        return cls(**d)

    def scores(self) -> dict[str, float]:
        """Score of every candidate: the full reranked order for evaluation."""
        return {p.passage_id: p.score for p in self.passages}
