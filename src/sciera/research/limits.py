"""The limits on a research run; :meth:`Limits.exceeded` names the one that ends it."""

from __future__ import annotations

from dataclasses import dataclass


@dataclass(frozen=True, slots=True)
class Limits:
    max_steps: int = 8
    budget_tokens: int | None = None  # prompt + completion tokens of the agent's LLM calls
    max_seconds: float | None = None  # wall time of the loop

    def __post_init__(self) -> None:
        if self.max_steps < 1:
            raise ValueError("max_steps must be at least 1")
        if self.budget_tokens is not None and self.budget_tokens < 1:
            raise ValueError("budget_tokens must be at least 1")
        if self.max_seconds is not None and self.max_seconds <= 0:
            raise ValueError("max_seconds must be positive")

    def exceeded(self, steps: int, tokens: int, seconds: float) -> str | None:
        """Checked before each step: the limit reached, or None to go on."""
        if steps >= self.max_steps:
            return "max_steps"
        if self.budget_tokens is not None and tokens >= self.budget_tokens:
            return "budget_tokens"
        if self.max_seconds is not None and seconds >= self.max_seconds:
            return "wall_time"
        return None
