"""The LLM protocol every LLM-driven stage talks to, and its small result types.

Backends (one module each): ``llamacpp`` (embedded default) and ``openai_compat``
(vLLM, Ollama, llama.cpp server, hosted APIs). ``CachedLLM`` wraps any backend
with the persistent response cache and usage accounting.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any, Literal, Protocol, runtime_checkable

Role = Literal["system", "user", "assistant"]


@dataclass(frozen=True, slots=True)
class Message:
    role: Role
    content: str


@dataclass(frozen=True, slots=True)
class Completion:
    """A generated reply with its cost."""

    text: str
    prompt_tokens: int = 0
    completion_tokens: int = 0
    seconds: float = 0.0
    finish_reason: str = ""
    cached: bool = False


@dataclass(frozen=True, slots=True)
class ParseFailure:
    """A reply that could not be read as the expected structure.

    Callers treat it as "not relevant" / "no answer"; it never counts as a positive.
    """

    raw: str
    error: str


@dataclass(frozen=True, slots=True)
class JSONResult:
    """``value`` is the parsed object, or None with ``failure`` set."""

    value: Mapping[str, Any] | None
    completion: Completion
    failure: ParseFailure | None = None

    @property
    def ok(self) -> bool:
        return self.failure is None


@dataclass(frozen=True, slots=True)
class ChoiceProbs:
    """Normalized probability of each short answer, read from one forward pass."""

    probs: Mapping[str, float]
    prompt_tokens: int = 0
    seconds: float = 0.0
    cached: bool = False
    raw_mass: float = 1.0  # probability mass the choices had before normalization

    def expected(self, values: Mapping[str, float] | None = None) -> float:
        """Expected value over choices (choices parsed as numbers unless ``values`` given)."""
        vals = values or {c: float(c) for c in self.probs}
        return sum(p * vals[c] for c, p in self.probs.items())


@dataclass
class Usage:
    """Counters of calls, tokens and seconds (per stage in ``by_stage``)."""

    calls: int = 0
    prompt_tokens: int = 0
    completion_tokens: int = 0
    seconds: float = 0.0
    cache_hits: int = 0
    cache_misses: int = 0
    failures: int = 0
    by_stage: dict[str, dict[str, float]] = field(default_factory=dict)


@runtime_checkable
class LLM(Protocol):
    """What every LLM backend provides."""

    @property
    def model_id(self) -> str:
        """Identifies model + weights (e.g. registry name and sha256) for cache keys."""
        ...

    def complete(
        self,
        messages: Sequence[Message],
        *,
        max_tokens: int = 256,
        temperature: float = 0.0,
        stop: Sequence[str] | None = None,
    ) -> Completion: ...

    def complete_json(
        self,
        messages: Sequence[Message],
        schema: Mapping[str, Any],
        *,
        max_tokens: int = 512,
    ) -> JSONResult: ...

    def choice_logprobs(
        self, messages: Sequence[Message], choices: Sequence[str]
    ) -> ChoiceProbs: ...


SEED_TAG = "#seed="
"""Appended to a model id to partition the response cache by sampling seed (the eval
runner's repeats); it names the same weights and prompts, see :func:`model_identity`."""


def model_identity(model_id: str) -> str:
    """The model a (possibly seed-tagged) model id names: ``"m@abc#seed=2"`` -> ``"m@abc"``.
    Artifacts fitted to a model's outputs, such as DeepEra's calibrators, key on this."""
    return model_id.split(SEED_TAG, 1)[0]


def context_limits(llm: object) -> tuple[int, Any] | None:
    """(context window in tokens, token counter) of the backend behind any wrappers.

    Wrappers (the response cache, meters) keep the backend in ``inner``. ``None`` when the
    backend does not expose both (HTTP servers: their limits are the server's business).
    """
    seen: set[int] = set()
    while llm is not None and id(llm) not in seen:
        seen.add(id(llm))
        n_ctx, count = getattr(llm, "n_ctx", None), getattr(llm, "count_tokens", None)
        if isinstance(n_ctx, int) and callable(count):
            return n_ctx, count
        llm = getattr(llm, "inner", None)
    return None
