"""Usage accounting per LLM call and per pipeline stage.

A stage is named with the :func:`stage` context manager; the name lives in a
context variable, so it follows the code that runs inside the ``with`` block,
including asyncio tasks. Worker threads do not inherit it: wrap the function
you submit to a pool with :func:`bind` so its calls count under the caller's
stage. The innermost ``stage()`` wins (names are not joined).
"""

from __future__ import annotations

import contextvars
import copy
import threading
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from typing import ParamSpec, TypeVar

from sciera.llm.base import Usage

DEFAULT_STAGE = "default"
_STAGE: contextvars.ContextVar[str] = contextvars.ContextVar("sciera_llm_stage", default="")
_FIELDS = (
    "calls",
    "prompt_tokens",
    "completion_tokens",
    "seconds",
    "cache_hits",
    "cache_misses",
    "failures",
)

P = ParamSpec("P")
R = TypeVar("R")


def current_stage() -> str:
    """The stage LLM calls made here are counted under (``"default"`` outside any)."""
    return _STAGE.get() or DEFAULT_STAGE


@contextmanager
def stage(name: str) -> Iterator[str]:
    """Count LLM calls made inside the block under ``name`` (e.g. ``"deepera.assess"``)."""
    if not name:
        raise ValueError("stage name must be non-empty")
    token = _STAGE.set(name)
    try:
        yield name
    finally:
        _STAGE.reset(token)


def bind(fn: Callable[P, R]) -> Callable[P, R]:
    """``fn`` running in a copy of the caller's context (stage) -- for thread pools."""
    ctx = contextvars.copy_context()

    def run(*args: P.args, **kwargs: P.kwargs) -> R:
        return ctx.copy().run(fn, *args, **kwargs)

    return run


class UsageTracker:
    """Thread-safe counters of calls, tokens, seconds, cache hits and failures.

    ``cached`` is True for a cache hit, False for a miss and None for a call
    that was not cacheable (not counted as either). Tokens are those the model
    processed for this call: a cache hit costs none.
    """

    def __init__(self) -> None:
        self._lock = threading.Lock()
        self._usage = Usage()

    def record(
        self,
        stage: str | None,
        prompt_tokens: int,
        completion_tokens: int,
        seconds: float,
        cached: bool | None,
        failed: bool,
    ) -> None:
        name = stage or current_stage()
        delta = {
            "calls": 1,
            "prompt_tokens": prompt_tokens,
            "completion_tokens": completion_tokens,
            "seconds": seconds,
            "cache_hits": int(cached is True),
            "cache_misses": int(cached is False),
            "failures": int(failed),
        }
        with self._lock:
            row = self._usage.by_stage.setdefault(name, dict.fromkeys(_FIELDS, 0))
            for key, value in delta.items():
                setattr(self._usage, key, getattr(self._usage, key) + value)
                row[key] += value

    def snapshot(self) -> Usage:
        """A copy of the counters (safe to keep while calls continue)."""
        with self._lock:
            return copy.deepcopy(self._usage)

    def reset(self) -> Usage:
        """Return the counters and start again from zero."""
        with self._lock:
            usage, self._usage = self._usage, Usage()
        return usage
