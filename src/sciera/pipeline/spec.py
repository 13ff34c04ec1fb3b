"""The one description of a pipeline: which stage runs with which options.

``sciera ask``, the server, the MCP tools and the research agent's answer step build their
spec from :class:`~sciera.settings.Settings` (:meth:`PipelineSpec.from_settings`); an
experiment's YAML lists specs (``sciera.eval.experiment``, which adds a name and the
agent option); :func:`sciera.pipeline.build.build_pipeline` turns a spec into a
:class:`~sciera.pipeline.run.Pipeline`.
"""

from __future__ import annotations

from typing import Any

from pydantic import BaseModel, ConfigDict, Field, field_validator, model_validator

from sciera.settings import FilterSettings, Settings, VerifySettings

CANDIDATES = "candidates"
"""The first stage of a pipeline whose candidates the caller gives (fixed pools)."""
NO_RERANKER = "none"
"""``rerank.reranker`` that runs no rerank stage (the first stage's order is kept)."""


class PipelineSpec(BaseModel):
    """retrieve -> [rerank] -> filter -> [verify] -> [evidence] -> [generate]."""

    model_config = ConfigDict(extra="forbid", frozen=True)

    retriever: str = Field("bm25", description="bm25, dense, hybrid or candidates.")
    depth: int = Field(100, ge=1, description="First-stage depth (documents or passages).")
    reranker: str | None = None
    rerank_depth: int | None = Field(None, ge=1, description="Candidates given to the reranker.")
    reranker_params: dict[str, Any] = Field(default_factory=dict)
    filter: FilterSettings = Field(
        default_factory=lambda: FilterSettings(use_tau=False),
        description="Which reranked passages are kept: tau over calibrated scores (off unless "
        "use_tau), at most top_k; the evidence and the answer read the kept passages.",
    )
    verify: VerifySettings | None = Field(
        None,
        description="Verify claims and yes/no questions against the top-ranked abstracts "
        "(their answers' decision); None: no verify stage.",
    )
    evidence: str | None = None
    evidence_params: dict[str, Any] = Field(default_factory=dict)
    generator: str | None = None
    generator_params: dict[str, Any] = Field(default_factory=dict)

    @classmethod
    def from_settings(cls, settings: Settings) -> PipelineSpec:
        """The answering pipeline the settings describe (what ``sciera ask`` runs)."""
        reranker = settings.rerank.reranker
        return cls(
            retriever=settings.retrieve.retriever,
            depth=settings.rerank.depth,
            reranker=None if reranker == NO_RERANKER else reranker,
            filter=settings.filter,
            verify=settings.verify if settings.verify.enabled else None,
            evidence=settings.answer.evidence,
            generator="llm",
        )

    @field_validator("retriever")
    @classmethod
    def _known_retriever(cls, value: str) -> str:
        from sciera.retrieve.open import RETRIEVERS

        names = [*sorted(RETRIEVERS), CANDIDATES]
        if value not in names:
            raise ValueError(f"unknown retriever {value!r} (choose from {', '.join(names)})")
        return value

    @field_validator("reranker")
    @classmethod
    def _known_reranker(cls, value: str | None) -> str | None:
        from sciera.rerank.registry import RERANKERS

        if value is not None and value not in RERANKERS:
            raise ValueError(
                f"unknown reranker {value!r} (choose from {', '.join(sorted(RERANKERS))})"
            )
        return value

    @field_validator("evidence")
    @classmethod
    def _known_extractor(cls, value: str | None) -> str | None:
        from sciera.evidence.registry import EXTRACTORS

        if value is not None and value not in EXTRACTORS:
            raise ValueError(
                f"unknown evidence extractor {value!r} (choose from "
                f"{', '.join(sorted(EXTRACTORS))})"
            )
        return value

    @field_validator("generator")
    @classmethod
    def _known_generator(cls, value: str | None) -> str | None:
        from sciera.generate.registry import GENERATORS

        if value is not None and value not in GENERATORS:
            raise ValueError(
                f"unknown generator {value!r} (choose from {', '.join(sorted(GENERATORS))})"
            )
        return value

    @model_validator(mode="after")
    def _ensemble_params(self) -> PipelineSpec:
        if self.reranker == "ensemble":
            from sciera.rerank.ensemble import check_params

            try:
                check_params(self.reranker_params)
            except ValueError as exc:
                raise ValueError(f"reranker_params.{exc}") from None
        return self

    @property
    def uses_llm(self) -> bool:
        from sciera.rerank.registry import uses_llm

        reranker_llm = self.reranker is not None and uses_llm(self.reranker, self.reranker_params)
        return reranker_llm or bool(self.evidence or self.generator)
