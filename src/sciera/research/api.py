"""Build a research agent from settings and run it: :func:`research` (Python) and what
``sciera research`` calls."""

from __future__ import annotations

from dataclasses import dataclass, replace
from pathlib import Path
from typing import TYPE_CHECKING, Any

from sciera.errors import ScieraError, require_query
from sciera.research.q2q import Q2Q_MODES

if TYPE_CHECKING:
    from sciera.llm.base import LLM
    from sciera.pipeline import PipelineSpec
    from sciera.research.agent import ResearchAgent
    from sciera.research.trace import Run
    from sciera.settings import Settings

DEPTHS: tuple[int, ...] = (10, 20, 50)


RESEARCH_N_CTX = 8192
"""The LLM context a research run asks for unless told otherwise: the conversation keeps
every search's passages (5 x up to 512 tokens each), so the default 4,096 holds one
search. Qwen2.5 takes 32k; the KV cache of 8,192 tokens costs about 230 MB for the 1.5B."""


@dataclass(frozen=True, slots=True)
class ResearchOptions:
    """The agent's own options (retrieval, LLM and answer options come from Settings)."""

    max_steps: int = 8
    budget_tokens: int | None = None
    max_seconds: float | None = None
    reranker: str | None = None  # None: the first stage's top 5, no reranking
    depth: int = 10  # candidates the reranker sees
    q2q: str = "none"
    lexical_raw: bool = True  # BM25 keeps the raw query when Q2Q rewrites it
    k: int = 5  # passages each search shows the agent
    passage_tokens: int = 512
    document_tokens: int = 2048
    top_k: int | None = None  # evidence passed to the generator; None: settings.filter.top_k
    extract: str | None = None  # per-step evidence extractor (sciera.evidence.registry name)
    question_type: str | None = None  # every answer of this type; None: per question

    def __post_init__(self) -> None:
        if self.depth not in DEPTHS:
            raise ScieraError(f"--depth must be one of {list(DEPTHS)}, got {self.depth}")
        if self.q2q not in Q2Q_MODES:
            raise ScieraError(f"--q2q must be one of {list(Q2Q_MODES)}, got {self.q2q!r}")
        if self.question_type is not None:
            from sciera.generate.qtype import resolve_question_type

            try:
                resolve_question_type("", self.question_type)
            except ValueError as exc:
                raise ScieraError(f"question_type: {exc}") from None


def build_agent(
    corpus: str | Path, settings: Settings, llm: LLM, options: ResearchOptions
) -> ResearchAgent:
    """Open the corpus and build every part; one LLM is shared by all. The answer step is
    the pipeline ``sciera ask`` runs (:func:`answer_spec`) over the gathered passages."""
    from sciera.corpus.store import PassageStore
    from sciera.pipeline import build_pipeline
    from sciera.research.agent import ResearchAgent
    from sciera.research.limits import Limits
    from sciera.research.q2q import QueryRewriter
    from sciera.research.tools import DocumentReader, SearchTool, TokenCutter
    from sciera.retrieve.open import open_retriever

    first = settings.retrieve.retriever
    retriever = open_retriever(corpus, first, settings)
    reranker = None
    if options.reranker:
        from sciera.rerank.registry import make_reranker, uses_llm

        kwargs: dict[str, Any] = {"llm": llm} if uses_llm(options.reranker) else {}
        reranker = make_reranker(options.reranker, settings, **kwargs)
    extractor = None
    if options.extract:
        from sciera.evidence.registry import make_extractor

        extractor = make_extractor(options.extract, settings, llm=llm)
    answerer = build_pipeline(answer_spec(settings, options), settings, llm=llm)
    return ResearchAgent(
        llm=llm,
        search_tool=SearchTool(retriever, reranker, options.depth, options.k),
        reader=DocumentReader(PassageStore.open(corpus)),
        answerer=answerer,
        rewriter=QueryRewriter(llm, options.q2q),
        limits=Limits(options.max_steps, options.budget_tokens, options.max_seconds),
        first_stage=first,
        lexical_raw=options.lexical_raw,
        passage_tokens=options.passage_tokens,
        document_tokens=options.document_tokens,
        extractor=extractor,
        cutter=TokenCutter.for_llm(llm),
    )


def answer_spec(settings: Settings, options: ResearchOptions) -> PipelineSpec:
    """The agent's answer step: the gathered passages are the candidates (best score
    first), the filter keeps the best ``top_k`` (the scores come from several searches, so
    no threshold), a claim or yes/no question is verified against the best-scored
    abstracts, and the generator ``sciera ask`` uses answers from them as they are."""
    from sciera.pipeline import CANDIDATES, PipelineSpec
    from sciera.settings import FilterSettings

    top_k = options.top_k or settings.filter.top_k
    params = {} if options.question_type is None else {"question_type": options.question_type}
    return PipelineSpec(
        retriever=CANDIDATES,
        filter=FilterSettings(use_tau=False, top_k=top_k),
        verify=settings.verify if settings.verify.enabled else None,
        generator="llm",
        generator_params=params,
    )


def research(
    question: str,
    corpus: str | Path,
    preset: str | None = None,
    *,
    question_type: str | None = None,
    llm: LLM | None = None,
    options: ResearchOptions | None = None,
    **overrides: Any,
) -> Run:
    """Answer ``question`` over ``corpus`` with the multi-step research agent.

    ``options`` are the agent's (steps, budgets, reranker, Q2Q ...); ``question_type`` is
    a shortcut for ``options.question_type`` (giving both, different, is an error);
    ``overrides`` are settings sections as in :func:`sciera.ask` (e.g.
    ``retrieve={"retriever": "bm25"}``); ``llm`` reuses an already built LLM.
    """
    from sciera.settings import load_settings

    question = require_query(question, "question")
    options = options or ResearchOptions()
    if question_type is not None and question_type != options.question_type:
        if options.question_type is not None:
            raise ScieraError(
                f"question_type: {question_type!r} given, and {options.question_type!r} "
                "in options; give one"
            )
        options = replace(options, question_type=question_type)
    overrides.setdefault("llm", {})
    overrides["llm"] = {"n_ctx": RESEARCH_N_CTX, **overrides["llm"]}
    settings = load_settings(preset, **overrides)
    if llm is None:
        from sciera.llm.registry import make_llm

        llm = make_llm(settings)
    agent = build_agent(corpus, settings, llm, options)
    return agent.run(question)
