"""Explicit registries: selector and verdict-model names -> classes (imported lazily, so a
backend costs nothing until asked for). Each class builds itself with ``from_settings``."""

from __future__ import annotations

import importlib
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from sciera.settings import Settings
    from sciera.verify.base import RationaleSelector, VerdictModel

SELECTORS: dict[str, str] = {
    "trained": "sciera.verify.trained:TrainedSelector",
}
VERDICTS: dict[str, str] = {
    "trained": "sciera.verify.trained:TrainedVerdict",
    "llm": "sciera.verify.llm_verdict:LLMVerdict",
    "combined": "sciera.verify.llm_verdict:CombinedVerdict",
}
LLM_VERDICTS: frozenset[str] = frozenset({"llm", "combined"})
"""Verdict models that call an LLM (built with ``llm=``: the pipeline's shared one)."""


def _load(table: dict[str, str], kind: str, name: str) -> type:
    try:
        target = table[name]
    except KeyError:
        raise ValueError(f"unknown {kind} {name!r}; choose one of {sorted(table)}") from None
    module, _, attr = target.partition(":")
    return getattr(importlib.import_module(module), attr)


def selector_class(name: str) -> type:
    return _load(SELECTORS, "rationale selector", name)


def verdict_class(name: str) -> type:
    return _load(VERDICTS, "verdict model", name)


def make_selector(name: str, settings: Settings, **params: Any) -> RationaleSelector:
    return selector_class(name).from_settings(settings, **params)  # type: ignore[no-any-return]


def make_verdict(name: str, settings: Settings, **params: Any) -> VerdictModel:
    return verdict_class(name).from_settings(settings, **params)  # type: ignore[no-any-return]
