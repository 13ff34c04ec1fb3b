"""Explicit registry of multi-step agents, for ``sciera eval run`` pipelines::

    pipelines:
      - name: agent-q2q
        retriever: hybrid
        agent: research
        agent_params: {max_steps: 6, q2q: q+r, reranker: cross_encoder, depth: 10}

An agent has ``run(question) -> Run`` (:class:`~sciera.research.trace.Run`). Its
parameters are :class:`~sciera.research.api.ResearchOptions` fields; an unknown one is an
error naming the valid ones.
"""

from __future__ import annotations

import dataclasses
import importlib
from pathlib import Path
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from sciera.llm.base import LLM
    from sciera.settings import Settings

AGENTS: dict[str, str] = {"research": "sciera.research.api:build_agent"}
"""Agent name -> ``module:builder``; a builder takes (corpus, settings, llm, options)."""


def agent_options(params: dict[str, Any]) -> Any:
    """:class:`ResearchOptions` from a mapping; unknown keys raise ``ValueError``."""
    from sciera.research.api import ResearchOptions

    names = [f.name for f in dataclasses.fields(ResearchOptions)]
    unknown = sorted(set(params) - set(names))
    if unknown:
        raise ValueError(f"unknown agent parameter {unknown[0]!r} (choose from {', '.join(names)})")
    return ResearchOptions(**params)


def make_agent(
    name: str, settings: Settings, *, corpus: str | Path, llm: LLM, **params: Any
) -> Any:
    """Build the named agent over ``corpus`` with ``llm``; ``params`` are its options."""
    try:
        target = AGENTS[name]
    except KeyError:
        raise ValueError(f"unknown agent {name!r}; choose one of {sorted(AGENTS)}") from None
    module, _, attr = target.partition(":")
    builder = getattr(importlib.import_module(module), attr)
    return builder(corpus, settings, llm, agent_options(params))
