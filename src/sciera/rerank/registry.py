"""Explicit registry: reranker name -> class (imported lazily, so heavy backends cost nothing
until asked for). Each class builds itself from settings with ``from_settings``. Also here:
the named members of an ensemble config (:class:`MemberSpec`), checked against the names."""

from __future__ import annotations

import importlib
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from sciera.rerank.base import Reranker
    from sciera.settings import Settings

RERANKERS: dict[str, str] = {
    "bm25": "sciera.rerank.bm25:BM25Reranker",
    "embedding": "sciera.rerank.embedding:EmbeddingReranker",
    "cross_encoder": "sciera.rerank.cross_encoder:CrossEncoderReranker",
    "llm_pointwise": "sciera.rerank.llm_pointwise:LLMPointwiseReranker",
    "llm_graded": "sciera.rerank.llm_pointwise:LLMGradedReranker",
    "llm_listwise": "sciera.rerank.llm_listwise:LLMListwiseReranker",
    "ensemble": "sciera.rerank.ensemble:EnsembleReranker",
    "deepera": "sciera.rerank.deepera.agent:DeepEraReranker",
}

LLM_RERANKERS: frozenset[str] = frozenset(
    {"llm_pointwise", "llm_graded", "llm_listwise", "deepera"}
)
"""Rerankers that always call an LLM (built with ``llm=``); an ensemble does when a member does."""


def uses_llm(name: str, params: Mapping[str, Any] | None = None) -> bool:
    """Whether reranker ``name`` built with ``params`` calls an LLM. An ensemble of named
    members calls one when a member does; the ``bioasq`` preset (no members) always does."""
    if name in LLM_RERANKERS:
        return True
    if name != "ensemble":
        return False
    members = (params or {}).get("members")
    if members is None or not all(isinstance(m, Mapping) for m in members):
        return True  # the bioasq preset, or members built already: assume it does
    return any(uses_llm(m.name, m.params) for m in parse_members(members))


_MEMBER_KEYS = frozenset({"name", "weight", "params"})


@dataclass(frozen=True, slots=True)
class MemberSpec:
    """An ensemble member named in a config: ``{name: <registered reranker>, weight: 1.0,
    params: {}}`` (:mod:`sciera.rerank.ensemble`)."""

    name: str
    weight: float = 1.0
    params: Mapping[str, Any] = field(default_factory=dict)

    @classmethod
    def parse(cls, value: Any) -> MemberSpec:
        if not isinstance(value, Mapping):
            raise ValueError("expected a mapping {name, weight, params}")
        extra = sorted(set(value) - _MEMBER_KEYS)
        if extra:
            raise ValueError(f"unknown keys {extra} (allowed: name, weight, params)")
        name = value.get("name")
        if name not in RERANKERS:
            raise ValueError(
                f"unknown reranker {name!r} (choose from {', '.join(sorted(RERANKERS))})"
            )
        weight = value.get("weight", 1.0)
        if isinstance(weight, bool) or not isinstance(weight, int | float) or weight < 0:
            raise ValueError(f"weight must be a number >= 0, got {weight!r}")
        params = value.get("params", {})
        if not isinstance(params, Mapping):
            raise ValueError("params must be a mapping")
        return cls(name, float(weight), dict(params))


def parse_members(members: Any) -> list[MemberSpec]:
    """Named members of a config; errors say which one (``members[1]: ...``)."""
    if not isinstance(members, Sequence) or isinstance(members, str) or not members:
        raise ValueError("members: expected a non-empty list of {name, weight, params}")
    out = []
    for i, value in enumerate(members):
        try:
            out.append(MemberSpec.parse(value))
        except ValueError as exc:
            raise ValueError(f"members[{i}]: {exc}") from None
    return out


def reranker_class(name: str) -> type:
    try:
        target = RERANKERS[name]
    except KeyError:
        raise ValueError(f"unknown reranker {name!r}; choose one of {sorted(RERANKERS)}") from None
    module, _, attr = target.partition(":")
    return getattr(importlib.import_module(module), attr)


def reranker_identity(
    name: str, settings: Settings, params: Mapping[str, Any] | None = None
) -> str:
    """What reranker ``name`` built with ``params`` loads beyond those parameters (a trained
    model read by name: its files hashed), or "" when it loads nothing of the kind. A class
    says so with an ``identity(settings, **params)`` classmethod."""
    identity = getattr(reranker_class(name), "identity", None)
    return identity(settings, **dict(params or {})) if identity is not None else ""


def make_reranker(name: str, settings: Settings | None = None, **kwargs: Any) -> Reranker:
    """Build the named reranker. Keyword arguments override what settings provide
    (e.g. ``llm=...``, ``embedder=...``, ``model=...`` for the cross-encoder)."""
    if settings is None:
        from sciera.settings import load_settings

        settings = load_settings()
    return reranker_class(name).from_settings(settings, **kwargs)
