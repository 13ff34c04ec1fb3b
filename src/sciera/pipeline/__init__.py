"""The answering pipeline: one :class:`PipelineSpec` -> one :class:`Pipeline` -> ``run()``.

from sciera.pipeline import PipelineSpec, build_pipeline
from sciera.settings import load_settings

settings = load_settings()
pipe = build_pipeline(PipelineSpec.from_settings(settings), settings, corpus="corpora/scifact")
answer = pipe.answer("Vitamin D deficiency raises the risk of multiple sclerosis.")
"""

from __future__ import annotations

from pathlib import Path
from typing import TYPE_CHECKING, Any

from sciera.pipeline.build import build_pipeline, pipeline_from_settings
from sciera.pipeline.run import OnEvent, Pipeline, PipelineResult
from sciera.pipeline.serialize import answer_json, candidate_table, evidence_rows, ranking_rows
from sciera.pipeline.spec import CANDIDATES, NO_RERANKER, PipelineSpec

if TYPE_CHECKING:
    from sciera.llm.base import LLM
    from sciera.settings import Settings
    from sciera.types import Answer, Verification

__all__ = [
    "CANDIDATES",
    "NO_RERANKER",
    "OnEvent",
    "Pipeline",
    "PipelineResult",
    "PipelineSpec",
    "answer_json",
    "ask",
    "build_pipeline",
    "candidate_table",
    "evidence_rows",
    "pipeline_from_settings",
    "ranking_rows",
    "verify",
    "verify_spec",
]


def ask(
    question: str,
    corpus: str | Path,
    preset: str | None = None,
    *,
    question_type: str | None = None,
    llm: LLM | None = None,
    **overrides: Any,
) -> Answer:
    """Answer ``question`` over the ingested, indexed ``corpus`` directory.

    ``overrides`` are settings sections, e.g. ``answer={"evidence": "rational"}`` or
    ``retrieve={"retriever": "bm25"}``; ``llm`` reuses an already built LLM.
    """
    from sciera.settings import load_settings

    settings = load_settings(preset, **overrides)
    return pipeline_from_settings(corpus, settings, llm=llm).answer(question, question_type)


def verify_spec(settings: Settings) -> PipelineSpec:
    """What ``sciera verify`` runs: retrieve, rerank and filter as ``ask`` does (the kept
    passages are shown apart), then the verify stage over the top-ranked abstracts; no
    evidence extraction and no generator, so no LLM call unless a stage needs one."""
    ask_spec = PipelineSpec.from_settings(settings)
    return ask_spec.model_copy(
        update={
            "verify": settings.verify.model_copy(update={"enabled": True}),
            "evidence": None,
            "generator": None,
        }
    )


def verify(
    claim: str,
    corpus: str | Path,
    preset: str | None = None,
    *,
    llm: LLM | None = None,
    **overrides: Any,
) -> Verification:
    """Verify ``claim`` against the ingested, indexed ``corpus``: per top-ranked abstract a
    verdict (SUPPORT / CONTRADICT / NOT ENOUGH INFO) with its calibrated confidence and
    rationale sentences (verbatim, with their indices), and the overall verdict
    (CONFLICTING when strong abstracts disagree). ``overrides`` are settings sections,
    e.g. ``verify={"abstracts": 10}``."""
    from sciera.settings import load_settings

    settings = load_settings(preset, **overrides)
    pipe = build_pipeline(verify_spec(settings), settings, corpus=corpus, llm=llm)
    result = pipe.run(claim, "yesno")
    assert result.verification is not None
    return result.verification
