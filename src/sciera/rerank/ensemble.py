"""Score-level fusion of several rerankers after per-list normalization.

fused(p) = Σ_i w_i · norm_i(score_i(p)) / Σ_i w_i, with ``norm`` one of
:data:`sciera.rerank.normalize.NORMALIZERS` applied to each member's scores over the
candidate list. A member that drops a passage (DeepEra's filter) gives it 0.

``bioasq`` preset (BioASQ ensemble paper): cross-encoder : LLM listwise = 1 : 7. The paper
does not state its normalization; we use min-max.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import TYPE_CHECKING, Any

from sciera.rerank.base import Reranker, rescored
from sciera.rerank.normalize import NORMALIZERS, normalize
from sciera.types import Passage, Ranking

if TYPE_CHECKING:
    from sciera.settings import Settings

BIOASQ_WEIGHTS = (1.0, 7.0)  # cross_encoder, llm_listwise


class EnsembleReranker:
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
        """``members=[(reranker, weight), ...]`` or ``preset="bioasq"`` with
        ``model=<cross-encoder name or path>`` (and optionally ``llm=...``)."""
        normalization = kwargs.pop("normalization", "minmax")
        if "members" in kwargs:
            return cls(kwargs["members"], normalization)
        if kwargs.pop("preset", "bioasq") != "bioasq":
            raise ValueError("ensemble: give members=[(reranker, weight), ...] or preset='bioasq'")
        from sciera.rerank.registry import make_reranker

        ce = make_reranker("cross_encoder", settings, model=kwargs.pop("model", None))
        lw = make_reranker("llm_listwise", settings, **kwargs)
        return cls.bioasq(ce, lw, normalization)

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
