"""What the server holds open: the served corpora, their retrievers and pipelines, one LLM.

Everything opens on first use with the functions the CLI uses (``open_retriever``,
``make_reranker``, ``Pipeline.from_settings``) and stays open. One LLM is built for the
whole server and shared by every pipeline and LLM reranker; the
:class:`~sciera.serve.queue.LLMGate` makes sure only one request uses it at a time.

Opened objects are not assumed thread-safe (bm25s and PyStemmer keep per-call state): each
is used under its own lock, through the context managers::

    with resources.retriever("scifact", "bm25") as retriever:
        ranking = retriever.search(query, 10)
"""

from __future__ import annotations

import re
import threading
from collections.abc import Callable, Hashable, Iterator, Mapping
from contextlib import AbstractContextManager, contextmanager
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING, Any

from sciera.corpus.store import STORE_FILE, PassageStore
from sciera.errors import ScieraError
from sciera.serve.errors import NotFound
from sciera.settings import Settings

if TYPE_CHECKING:
    from sciera.filter import ThresholdFilter
    from sciera.llm.base import LLM
    from sciera.pipeline import Pipeline
    from sciera.rerank.base import Reranker
    from sciera.retrieve.base import Retriever

LLMFactory = Callable[[Settings], "LLM"]
PipelineFactory = Callable[[Path, Settings, "LLM"], "Pipeline"]

_NAME = re.compile(r"[A-Za-z0-9][A-Za-z0-9_.-]{0,99}")


def _make_llm(settings: Settings) -> LLM:
    from sciera.llm.registry import make_llm

    return make_llm(settings)


def _make_pipeline(corpus: Path, settings: Settings, llm: LLM) -> Pipeline:
    from sciera.pipeline import pipeline_from_settings

    return pipeline_from_settings(corpus, settings, llm=llm)


@dataclass
class _Held:
    value: Any
    lock: threading.Lock


class Resources:
    """The served corpora (name -> directory; the first is the default) and what is open."""

    def __init__(
        self,
        corpora: Mapping[str, Path],
        settings: Settings,
        *,
        llm_factory: LLMFactory | None = None,
        pipeline_factory: PipelineFactory | None = None,
    ) -> None:
        if not corpora:
            raise ScieraError("no corpus to serve; give --corpus DIR")
        for name, path in corpora.items():
            if not _NAME.fullmatch(name):
                raise ScieraError(
                    f"corpus name {name!r}: use letters, digits, '_', '.' or '-' (at most 100)"
                )
            if not (Path(path) / STORE_FILE).is_file():
                raise ScieraError(
                    f"{name}: no passage store at {Path(path) / STORE_FILE}; "
                    f"run `sciera ingest PATH --corpus {path}` and `sciera index` first"
                )
        self.corpora: dict[str, Path] = {name: Path(path) for name, path in corpora.items()}
        self.default = next(iter(self.corpora))
        self.settings = settings
        self._llm_factory = llm_factory or _make_llm
        self._pipeline_factory = pipeline_factory or _make_pipeline
        self._opening = threading.RLock()  # one object opens at a time; reuse is lock-free
        self._held: dict[Hashable, _Held] = {}
        self._llm: LLM | None = None

    def resolve(self, name: str | None) -> str:
        """The corpus name a request means (None: the default); an unknown one is NotFound."""
        if name is None:
            return self.default
        if name not in self.corpora:
            raise NotFound(f"unknown corpus {name!r}; served: {', '.join(self.corpora)}")
        return name

    def llm(self) -> LLM:
        """The one LLM every request shares (built on first use)."""
        with self._opening:
            if self._llm is None:
                self._llm = self._llm_factory(self.settings)
            return self._llm

    def _hold(self, key: Hashable, opener: Callable[[], Any]) -> _Held:
        held = self._held.get(key)
        if held is None:
            with self._opening:
                held = self._held.get(key)
                if held is None:  # a failed open is not kept: the next request retries
                    held = self._held[key] = _Held(opener(), threading.Lock())
        return held

    @contextmanager
    def _use(self, key: Hashable, opener: Callable[[], Any]) -> Iterator[Any]:
        held = self._hold(key, opener)
        with held.lock:
            yield held.value

    def retriever(self, corpus: str, name: str) -> AbstractContextManager[Retriever]:
        """``with`` the ``name`` retriever (bm25, dense, hybrid) of ``corpus``."""
        from sciera.retrieve.open import open_retriever

        path = self.corpora[corpus]
        return self._use(
            ("retriever", corpus, name), lambda: open_retriever(path, name, self.settings)
        )

    def reranker(self, name: str) -> AbstractContextManager[Reranker]:
        """``with`` the ``name`` reranker (LLM rerankers get the shared LLM)."""
        from sciera.rerank.registry import make_reranker

        def build() -> Reranker:
            kwargs = {"llm": self.llm()} if self.reranker_uses_llm(name) else {}
            return make_reranker(name, self.settings, **kwargs)

        return self._use(("reranker", name), build)

    def pipeline(self, corpus: str) -> AbstractContextManager[Pipeline]:
        """``with`` the answering pipeline of ``corpus`` (on the shared LLM)."""
        path = self.corpora[corpus]
        return self._use(
            ("pipeline", corpus), lambda: self._pipeline_factory(path, self.settings, self.llm())
        )

    def verifier(self, corpus: str) -> AbstractContextManager[Pipeline]:
        """``with`` the verify pipeline of ``corpus`` (retrieve, rerank, filter, verify;
        the shared LLM only if a stage calls one)."""
        from sciera.pipeline import build_pipeline, verify_spec

        path = self.corpora[corpus]

        def build() -> Pipeline:
            spec = verify_spec(self.settings)
            return build_pipeline(spec, self.settings, corpus=path, llm=self._lazy_llm())

        return self._use(("verifier", corpus), build)

    def _lazy_llm(self) -> LLM:
        """The shared LLM, built only when a stage first calls it."""
        from sciera.llm.metered import LazyLLM

        return LazyLLM(self.llm)

    def filter(self) -> ThresholdFilter:
        """The filter stage ``ask`` applies (tau over calibrated scores, at most top_k)."""
        from sciera.filter import ThresholdFilter

        f = self.settings.filter
        return ThresholdFilter(f.tau if f.use_tau else None, f.top_k)

    @staticmethod
    def reranker_uses_llm(name: str) -> bool:
        from sciera.rerank.registry import uses_llm

        return uses_llm(name)

    def document(self, corpus: str, doc_id: str) -> dict[str, Any]:
        """A document's passages in order, each with its section, subsection and kind (a
        passage's context in its paper); an unknown document is NotFound."""
        store = PassageStore.open(self.corpora[corpus])
        try:
            passages = store.document_passages(doc_id)
            places = store.passage_places([p.passage_id for p in passages])
        finally:
            store.close()
        if not passages:
            raise NotFound(f"no document {doc_id!r} in corpus {corpus!r}")
        rows = []
        for p in passages:
            place = places.get(p.passage_id)
            rows.append(
                {
                    "passage_id": p.passage_id,
                    "index": p.index,
                    "section": place.section if place else p.section,
                    "subsection": place.subsection if place else "",
                    "kind": place.kind if place else "",
                    "text": p.text,
                }
            )
        return {"corpus": corpus, "doc_id": doc_id, "title": passages[0].title, "passages": rows}

    def describe(self, corpus: str) -> dict[str, Any]:
        """Name, path, document and passage counts, and the indexes with a stale flag."""
        from sciera.retrieve.manifest import read_manifest

        path = self.corpora[corpus]
        store = PassageStore.open(path)
        try:
            fingerprint = store.fingerprint()
            documents, passages = store.count_documents(), store.count_passages()
        finally:
            store.close()
        indexes: dict[str, dict[str, Any]] = {}
        manifest = read_manifest(path)
        for key, rec in sorted((manifest.records if manifest else {}).items()):
            indexes[key] = {
                "kind": rec.kind,
                "passages": rec.passages,
                "built_at": rec.built_at,
                "params": dict(rec.params),
                "stale": rec.fingerprint != fingerprint,
            }
        return {
            "name": corpus,
            "path": str(path),
            "default": corpus == self.default,
            "documents": documents,
            "passages": passages,
            "indexes": indexes,
        }
