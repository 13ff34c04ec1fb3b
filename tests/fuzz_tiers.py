"""Two tiers for every generated-input test: a bounded default and a ``nightly`` run.

``tiered(given_kwargs, default=40, nightly=1000)`` turns one property (a plain test function
whose generated arguments ``given_kwargs`` names) into two tests: ``<name>`` with
``default`` examples, derandomized so the unit suite is reproducible, and
``<name>_nightly`` (marked ``nightly``, deselected by ``addopts``; run with
``pytest -m nightly``) with ``nightly`` random examples. Hypothesis keeps the failing
examples it finds in its database and replays them first next time.
"""

from __future__ import annotations

import sys
from collections.abc import Callable
from typing import Any

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

BASE = settings(
    deadline=None,
    suppress_health_check=[HealthCheck.function_scoped_fixture, HealthCheck.too_slow],
)


def tiered(
    default: int = 40, nightly: int = 1000, **strategies: st.SearchStrategy[Any]
) -> Callable[[Callable[..., None]], Callable[..., None]]:
    """Decorator: the default-tier test, and a ``nightly`` twin added to its module."""

    def wrap(prop: Callable[..., None]) -> Callable[..., None]:
        module = sys.modules[prop.__module__]
        marks = getattr(prop, "pytestmark", [])
        fast = settings(BASE, max_examples=default, derandomize=True)(given(**strategies)(prop))
        slow = settings(BASE, max_examples=nightly)(given(**strategies)(_renamed(prop)))
        slow.pytestmark = [*marks, pytest.mark.nightly]  # type: ignore[attr-defined]
        setattr(module, f"{prop.__name__}_nightly", slow)
        return fast

    return wrap


def _renamed(prop: Callable[..., None]) -> Callable[..., None]:
    def twin(*args: Any, **kwargs: Any) -> None:
        prop(*args, **kwargs)

    import functools

    functools.update_wrapper(twin, prop)
    twin.__name__ = twin.__qualname__ = f"{prop.__name__}_nightly"
    twin.pytestmark = []  # type: ignore[attr-defined]
    return twin
