"""LLM access for every LLM-driven stage: one protocol, explicit backends, verified weights.

- :mod:`sciera.llm.base`: the ``LLM`` protocol and its result types.
- :func:`make_llm` (:mod:`sciera.llm.registry`): the configured backend (``llamacpp`` or
  ``openai``), wrapped in the response cache.
- :func:`ensure_model` (:mod:`sciera.llm.weights`): a registered model name or ``.gguf``
  path -> a verified GGUF file.

Backends import their heavy dependencies only when constructed.
"""

from sciera.llm.base import (
    LLM,
    ChoiceProbs,
    Completion,
    JSONResult,
    Message,
    ParseFailure,
    Usage,
)
from sciera.llm.registry import make_llm
from sciera.llm.weights import ensure_model, registered_models

__all__ = [
    "LLM",
    "ChoiceProbs",
    "Completion",
    "JSONResult",
    "Message",
    "ParseFailure",
    "Usage",
    "ensure_model",
    "make_llm",
    "registered_models",
]
