"""Explicit registry: generator name -> class (imported lazily)."""

from __future__ import annotations

import importlib
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from sciera.generate.base import Generator
    from sciera.settings import Settings

GENERATORS: dict[str, str] = {
    "llm": "sciera.generate.llm:LLMGenerator",
    "verdict": "sciera.generate.verified:VerdictGenerator",
}


def make_generator(name: str = "llm", settings: Settings | None = None, **kwargs: Any) -> Generator:
    try:
        target = GENERATORS[name]
    except KeyError:
        raise ValueError(
            f"unknown generator {name!r}; choose one of {sorted(GENERATORS)}"
        ) from None
    if settings is None:
        from sciera.settings import load_settings

        settings = load_settings()
    module, _, attr = target.partition(":")
    return getattr(importlib.import_module(module), attr).from_settings(settings, **kwargs)
