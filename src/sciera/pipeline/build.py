"""Build a :class:`~sciera.pipeline.run.Pipeline` from a :class:`PipelineSpec`: every stage
from its registry by its explicit name, one LLM shared by all (metered per stage)."""

from __future__ import annotations

import logging
from pathlib import Path
from typing import TYPE_CHECKING, Any

from sciera.filter import ThresholdFilter
from sciera.pipeline.run import Pipeline
from sciera.pipeline.spec import CANDIDATES, PipelineSpec
from sciera.settings import Settings

if TYPE_CHECKING:
    from sciera.corpus.store import PassageStore
    from sciera.llm.base import LLM
    from sciera.retrieve.base import Retriever

logger = logging.getLogger(__name__)
_warned: set[str] = set()  # corpora whose stale sentences this process has warned about


def build_pipeline(
    spec: PipelineSpec,
    settings: Settings,
    *,
    corpus: str | Path | None = None,
    llm: LLM | None = None,
    retriever: Retriever | None = None,
) -> Pipeline:
    """The stages ``spec`` names. ``retriever`` is an already opened first stage (else it
    is opened over ``corpus``; a ``candidates`` pipeline has none); ``llm`` is shared by
    every stage that calls one (else built from the settings, when one does)."""
    from sciera.evidence.registry import make_extractor
    from sciera.generate.registry import make_generator
    from sciera.llm.metered import MeteredLLM
    from sciera.rerank.registry import make_reranker, uses_llm

    # the stages read the spec's filter (DeepEra prunes only what it would drop)
    settings = settings.model_copy(update={"filter": spec.filter})
    if retriever is None and spec.retriever != CANDIDATES:
        if corpus is None:
            from sciera.errors import ScieraError

            raise ScieraError(f"retriever {spec.retriever!r} needs a corpus directory")
        from sciera.retrieve.open import open_retriever

        retriever = open_retriever(corpus, spec.retriever, settings)
    metered = None
    if spec.uses_llm:
        if llm is None:  # built on first use: the stages may not call it at all
            from sciera.llm.metered import LazyLLM
            from sciera.llm.registry import make_llm

            llm = LazyLLM(lambda: make_llm(settings))
        metered = llm if isinstance(llm, MeteredLLM) else MeteredLLM(llm)
    with_llm: dict[str, Any] = {"llm": metered} if metered is not None else {}

    reranker = None
    if spec.reranker is not None:
        params = dict(spec.reranker_params)
        if uses_llm(spec.reranker, params):
            params = {**with_llm, **params}
        reranker = make_reranker(spec.reranker, settings, **params)
    f = spec.filter
    extractor = None
    if spec.evidence is not None:
        extractor = make_extractor(spec.evidence, settings, **{**with_llm, **spec.evidence_params})
    verifier = None
    if spec.verify is not None:
        from sciera.verify.stage import VerifyStage

        settings = settings.model_copy(update={"verify": spec.verify})
        verifier = VerifyStage.from_settings(settings, sentences=_store(corpus), llm=metered)
    generator = None
    if spec.generator is not None:
        generator = make_generator(
            spec.generator, settings, **{**with_llm, **spec.generator_params}
        )
    return Pipeline(
        spec,
        retriever,
        reranker,
        ThresholdFilter(f.tau if f.use_tau else None, f.top_k),
        verifier,
        extractor,
        generator,
        metered,
        spec.rerank_depth or settings.rerank.depth,
    )


def _store(corpus: str | Path | None) -> Any:
    """The corpus store, the verify stage's sentence source (None without a corpus)."""
    if corpus is None:
        return None
    from sciera.corpus.store import PassageStore

    store = PassageStore.open(corpus)
    _warn_stale_sentences(store, Path(corpus))
    return store


def _warn_stale_sentences(store: PassageStore, corpus: Path) -> None:
    """One warning per corpus and process when some of its files' sentences were cut by
    older rules of the splitter (rationale indices may then differ from a new ingest's)."""
    from sciera.corpus.ingest import stale_sentences

    key = str(corpus.resolve())
    if key in _warned:
        return
    _warned.add(key)
    stale = stale_sentences(store)
    if stale:
        more = f" and {len(stale) - 1} more files" if len(stale) > 1 else ""
        logger.warning(
            "%s: the sentences of %s%s were cut by an older sentence splitter; ingest it "
            "again (`sciera ingest %s --corpus %s`) to refresh them in place (passages and "
            "indexes stay)",
            corpus,
            stale[0],
            more,
            stale[0],
            corpus,
        )


def pipeline_from_settings(
    corpus: str | Path, settings: Settings, *, llm: LLM | None = None
) -> Pipeline:
    """The answering pipeline ``settings`` describe over ``corpus`` (``sciera ask``'s)."""
    return build_pipeline(PipelineSpec.from_settings(settings), settings, corpus=corpus, llm=llm)
