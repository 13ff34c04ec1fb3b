"""The Judge protocol and its result record."""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from dataclasses import asdict, dataclass, field
from typing import Any, Protocol, runtime_checkable


def mean_cost(timed: Iterable[tuple[float, float]], per: str) -> dict[str, float]:
    """Mean seconds and prompt tokens over ``(seconds, prompt_tokens)`` judgments:
    ``seconds_per_<per>``, ``prompt_tokens_per_<per>``, ``timed_<per>s``; empty for none."""
    rows = list(timed)
    if not rows:
        return {}
    return {
        f"seconds_per_{per}": sum(s for s, _ in rows) / len(rows),
        f"prompt_tokens_per_{per}": sum(t for _, t in rows) / len(rows),
        f"timed_{per}s": float(len(rows)),
    }


@dataclass(frozen=True, slots=True)
class JudgeScore:
    """One judgment. ``score`` is None exactly when ``failed`` (with ``error`` saying why)."""

    judge: str
    score: float | None
    model_id: str
    prompt_version: str  # "judge_lfs@1"
    method: str  # "expected" (grade distribution) or "sampled:n"
    failed: bool = False
    error: str = ""
    distribution: Mapping[str, float] = field(default_factory=dict)
    samples: tuple[int, ...] = ()
    sample_failures: int = 0
    prompt_tokens: int = 0
    completion_tokens: int = 0
    details: Mapping[str, float] = field(default_factory=dict)  # judge-specific numbers

    def to_dict(self) -> dict[str, Any]:
        out = asdict(self)
        out["distribution"] = dict(self.distribution)
        out["details"] = dict(self.details)
        out["samples"] = list(self.samples)
        return out

    @classmethod
    def from_dict(cls, data: Mapping[str, Any]) -> JudgeScore:
        d = dict(data)
        d["samples"] = tuple(d.get("samples", ()))
        return cls(**d)


@runtime_checkable
class Judge(Protocol):
    name: str
    needs_reference: bool  # False: it judges answers to questions without a reference too

    def judge(self, question: str, reference: str, candidate: str) -> JudgeScore: ...


def summarize_scores(scores: Iterable[JudgeScore]) -> dict[str, float]:
    """``{"mean": mean of judged scores (0.0 when none), "judged": n, "failures": n}``."""
    values, failures = [], 0
    for s in scores:
        if s.failed or s.score is None:
            failures += 1
        else:
            values.append(s.score)
    mean = sum(values) / len(values) if values else 0.0
    return {"mean": mean, "judged": float(len(values)), "failures": float(failures)}
