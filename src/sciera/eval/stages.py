"""Registries of the optional answering stages, resolved only when an experiment names them.

The evidence and generation packages follow the reranker registry's shape
(:mod:`sciera.rerank.registry`):

- ``sciera.evidence.registry``: ``EXTRACTORS`` (name -> target) and
  ``make_extractor(name, settings, **params)``; an extractor has
  ``extract(question, ranking)`` returning a sequence of :class:`~sciera.types.Evidence`
  (or an object with an ``evidence`` attribute);
- ``sciera.generate.registry``: ``GENERATORS`` and ``make_generator(name, settings,
  **params)``; a generator has ``answer(question, evidence)`` -> :class:`~sciera.types.Answer`;
- ``sciera.research.registry``: ``AGENTS`` and ``make_agent(name, settings, corpus=, llm=,
  **params)``; an agent has ``run(question)`` -> :class:`~sciera.research.trace.Run` and
  replaces a pipeline's retrieve-rerank-answer stages with its own loop.

When a package is not installed yet the stage is reported as unavailable.
"""

from __future__ import annotations

import importlib
from dataclasses import dataclass
from typing import Any

from sciera.rerank import registry as rerank_registry


@dataclass(frozen=True, slots=True)
class StageRegistry:
    kind: str
    module: str
    names_attr: str
    factory_attr: str

    def _module(self) -> Any:
        try:
            return importlib.import_module(self.module)
        except ImportError as exc:
            raise LookupError(
                f"{self.kind} stages are unavailable ({self.module}: {exc})"
            ) from None

    def names(self) -> list[str]:
        mod = self._module()
        names = getattr(mod, self.names_attr, None)
        if names is None:
            raise LookupError(f"{self.kind} stages are unavailable ({self.module} has no registry)")
        return sorted(names)

    def check(self, name: str) -> None:
        names = self.names()
        if name not in names:
            raise LookupError(f"unknown {self.kind} {name!r} (choose from {', '.join(names)})")

    def make(self, name: str, settings: Any, **params: Any) -> Any:
        self.check(name)
        return getattr(self._module(), self.factory_attr)(name, settings, **params)


STAGES: dict[str, StageRegistry] = {
    "evidence": StageRegistry(
        "evidence extractor", "sciera.evidence.registry", "EXTRACTORS", "make_extractor"
    ),
    "generator": StageRegistry(
        "generator", "sciera.generate.registry", "GENERATORS", "make_generator"
    ),
    "agent": StageRegistry("agent", "sciera.research.registry", "AGENTS", "make_agent"),
}

LLM_RERANKERS: frozenset[str] = rerank_registry.LLM_RERANKERS | {"ensemble"}
"""Rerankers that get the runner's seeded, cached LLM as ``llm=`` when their pipeline uses
one (:func:`sciera.rerank.registry.uses_llm`); an ensemble hands it to its LLM members."""
