"""LLM wrappers: a seed-tagged model id (cache entries per seed), and a meter of every
reply (what a pipeline run costs, by stage).

``CachedLLM`` keys its entries by model id, method, messages and call parameters;
the backend's sampling seed is not among them. So that repeat r (seed s) does not
reuse repeat 0's replies, the backend is wrapped in :class:`SeedTagged`, whose
``model_id`` ends in ``#seed=s``: cache entries are then per seed, and re-running
the same experiment (same seeds) reuses them.

:class:`MeteredLLM` sits outside the cache and counts the tokens of every reply
the pipeline receives (a cache hit still carries its original token counts), so
tokens/query measures the pipeline's cost, not how warm the cache was.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any

from sciera.llm.accounting import UsageTracker
from sciera.llm.base import LLM, SEED_TAG, ChoiceProbs, Completion, JSONResult, Message

COST_KEYS = ("llm_calls", "prompt_tokens", "completion_tokens", "cache_hits")


class SeedTagged:
    """``inner`` with ``#seed=<seed>`` appended to its model id (cache keys per seed)."""

    def __init__(self, inner: LLM, seed: int) -> None:
        self.inner, self.seed = inner, seed

    @property
    def model_id(self) -> str:
        return f"{self.inner.model_id}{SEED_TAG}{self.seed}"

    def complete(self, messages: Sequence[Message], **kw: Any) -> Completion:
        return self.inner.complete(messages, **kw)

    def complete_json(
        self, messages: Sequence[Message], schema: Mapping[str, Any], **kw: Any
    ) -> JSONResult:
        return self.inner.complete_json(messages, schema, **kw)

    def choice_logprobs(self, messages: Sequence[Message], choices: Sequence[str]) -> ChoiceProbs:
        return self.inner.choice_logprobs(messages, choices)


class MeteredLLM:
    """Counts calls, tokens, seconds and cache hits of every reply, by ``stage()``."""

    def __init__(self, inner: LLM) -> None:
        self.inner = inner
        self.tracker = UsageTracker()

    @property
    def model_id(self) -> str:
        return self.inner.model_id

    def complete(self, messages: Sequence[Message], **kw: Any) -> Completion:
        c = self.inner.complete(messages, **kw)
        self.tracker.record(None, c.prompt_tokens, c.completion_tokens, c.seconds, c.cached, False)
        return c

    def complete_json(
        self, messages: Sequence[Message], schema: Mapping[str, Any], **kw: Any
    ) -> JSONResult:
        r = self.inner.complete_json(messages, schema, **kw)
        c = r.completion
        self.tracker.record(
            None, c.prompt_tokens, c.completion_tokens, c.seconds, c.cached, not r.ok
        )
        return r

    def choice_logprobs(self, messages: Sequence[Message], choices: Sequence[str]) -> ChoiceProbs:
        p = self.inner.choice_logprobs(messages, choices)
        failed = sum(p.probs.values()) == 0
        self.tracker.record(None, p.prompt_tokens, 0, p.seconds, p.cached, failed)
        return p

    def totals(self) -> dict[str, float]:
        u = self.tracker.snapshot()
        return {
            "llm_calls": u.calls,
            "prompt_tokens": u.prompt_tokens,
            "completion_tokens": u.completion_tokens,
            "cache_hits": u.cache_hits,
        }


class LazyLLM:
    """An LLM built on its first use: a pipeline whose stages may not call one (a trained
    scorer, a decision without prose) never pays for loading the weights."""

    def __init__(self, build: Any) -> None:
        self._build, self._inner = build, None

    @property
    def inner(self) -> LLM:
        if self._inner is None:
            self._inner = self._build()
        return self._inner

    @property
    def built(self) -> bool:
        return self._inner is not None

    @property
    def model_id(self) -> str:
        return self.inner.model_id

    def complete(self, messages: Sequence[Message], **kw: Any) -> Completion:
        return self.inner.complete(messages, **kw)

    def complete_json(
        self, messages: Sequence[Message], schema: Mapping[str, Any], **kw: Any
    ) -> JSONResult:
        return self.inner.complete_json(messages, schema, **kw)

    def choice_logprobs(self, messages: Sequence[Message], choices: Sequence[str]) -> ChoiceProbs:
        return self.inner.choice_logprobs(messages, choices)
