"""Score-level fusion of several rerankers after per-list normalization.

fused(p) = Σ_i w_i · norm_i(score_i(p)) / Σ_i w_i, with ``norm`` one of
:data:`sciera.rerank.normalize.NORMALIZERS` applied to each member's scores over the
candidate list. A member that drops a passage (DeepEra's filter) gives it 0.

``bioasq`` preset (BioASQ ensemble paper): cross-encoder : LLM listwise = 1 : 7. The paper
does not state its normalization; we use min-max.

In a config (an experiment YAML's ``reranker_params``) members are named, e.g. a lexical +
dense "hybrid" over a fixed candidate pool with rank-based normalization::

    reranker: ensemble
    reranker_params:
      normalization: rank
      members:
        - {name: bm25, weight: 1.0}
        - {name: embedding, weight: 1.0, params: {}}
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import TYPE_CHECKING, Any

from sciera.rerank.base import Reranker, RerankerBase, rescored
from sciera.rerank.normalize import NORMALIZERS, normalize
from sciera.rerank.registry import MemberSpec, parse_members
from sciera.types import Passage, Ranking

if TYPE_CHECKING:
    from sciera.settings import Settings

BIOASQ_WEIGHTS = (1.0, 7.0)  # cross_encoder, llm_listwise


def check_params(params: Mapping[str, Any]) -> None:
    """Validate config parameters before anything is built (named members, normalization)."""
    if "members" in params:
        parse_members(params["members"])
    normalization = params.get("normalization", "minmax")
    if normalization not in NORMALIZERS:
        raise ValueError(
            f"normalization: unknown {normalization!r}; choose one of {sorted(NORMALIZERS)}"
        )


class EnsembleReranker(RerankerBase):
    name = "ensemble"

    def __init__(
        self, members: Sequence[tuple[Reranker, float]], normalization: str = "minmax"
    ) -> None:
        if not members:
            raise ValueError("ensemble needs at least one member reranker")
        if any(w < 0 for _, w in members) or sum(w for _, w in members) <= 0:
            raise ValueError("ensemble weights must be >= 0 with a positive sum")
        if normalization not in NORMALIZERS:
            raise ValueError(
                f"unknown normalization {normalization!r}; choose one of {sorted(NORMALIZERS)}"
            )
        self.members = list(members)
        self.normalization = normalization

    @classmethod
    def bioasq(
        cls, cross_encoder: Reranker, listwise: Reranker, normalization: str = "minmax"
    ) -> EnsembleReranker:
        return cls(
            [(cross_encoder, BIOASQ_WEIGHTS[0]), (listwise, BIOASQ_WEIGHTS[1])], normalization
        )

    @classmethod
    def from_settings(cls, settings: Settings, **kwargs: Any) -> EnsembleReranker:
        """``members=[(reranker, weight), ...]``, or named members
        ``members=[{"name": "bm25", "weight": 1.0, "params": {...}}, ...]`` (built with
        :func:`~sciera.rerank.registry.make_reranker`; an ``llm=...`` given here goes to the
        members that call an LLM), or ``preset="bioasq"`` with
        ``model=<cross-encoder name or path>`` (and optionally ``llm=...``)."""
        normalization = kwargs.pop("normalization", "minmax")
        if "members" in kwargs:
            members = kwargs.pop("members")
            llm = kwargs.pop("llm", None)
            if kwargs:
                raise ValueError(f"ensemble: unexpected parameters {sorted(kwargs)}")
            if any(isinstance(m, Mapping) for m in members):
                members = [_build_member(m, settings, llm) for m in parse_members(members)]
            return cls(members, normalization)
        if kwargs.pop("preset", "bioasq") != "bioasq":
            raise ValueError("ensemble: give members=[(reranker, weight), ...] or preset='bioasq'")
        from sciera.rerank.registry import make_reranker

        ce = make_reranker("cross_encoder", settings, model=kwargs.pop("model", None))
        lw = make_reranker("llm_listwise", settings, **kwargs)
        return cls.bioasq(ce, lw, normalization)

    @classmethod
    def identity(cls, settings: Settings, **params: Any) -> str:
        """The named members' identities (the bioasq preset's cross-encoder), joined."""
        from sciera.rerank.registry import reranker_identity

        members = params.get("members")
        if members is None:
            return reranker_identity("cross_encoder", settings, {"model": params.get("model")})
        if not all(isinstance(m, Mapping) for m in members):
            return ""  # members built already: nothing named to look up
        return "+".join(
            reranker_identity(m.name, settings, m.params) for m in parse_members(members)
        )

    def rerank(self, query: str, ranking: Ranking) -> Ranking:
        n = len(ranking.items)
        ids = [it.passage_id for it in ranking.items]
        total_w = sum(w for _, w in self.members)
        fused = [0.0] * n
        details: list[dict[str, Any]] = [{"members": {}} for _ in range(n)]
        for idx, (member, weight) in enumerate(self.members):
            out = member.rerank(query, ranking)
            raw = {it.passage_id: it.score for it in out.items}
            present = [pid for pid in ids if pid in raw]
            normed = dict(
                zip(present, normalize([raw[p] for p in present], self.normalization), strict=True)
            )
            key = f"{idx}:{getattr(member, 'name', type(member).__name__)}"
            for i, pid in enumerate(ids):
                nv = float(normed.get(pid, 0.0))
                fused[i] += weight * nv / total_w
                details[i]["members"][key] = {
                    "weight": weight,
                    "raw": raw.get(pid),
                    "normalized": nv,
                }
        for i in range(n):
            details[i]["score"] = fused[i]
            details[i]["normalization"] = self.normalization
        return rescored(ranking, fused, self.name, details, query=query)

    def score(self, query: str, passage: Passage) -> float:
        """Weighted mean of the members' raw scores for one passage (no normalization:
        a one-item list has nothing to normalize against)."""
        total_w = sum(w for _, w in self.members)
        return sum(w * m.score(query, passage) for m, w in self.members) / total_w


def _build_member(spec: MemberSpec, settings: Settings, llm: Any) -> tuple[Reranker, float]:
    from sciera.rerank.registry import make_reranker, uses_llm

    params = dict(spec.params)
    if llm is not None and uses_llm(spec.name, params):
        params["llm"] = llm
    return make_reranker(spec.name, settings, **params), spec.weight
