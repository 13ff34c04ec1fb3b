"""Open a retriever on a corpus directory's indexes, refusing stale ones."""

from __future__ import annotations

from collections.abc import Callable, Iterable
from pathlib import Path

from sciera.corpus.store import PassageStore
from sciera.embed.base import Embedder
from sciera.embed.registry import create_embedder, embedder_name
from sciera.errors import ScieraError
from sciera.retrieve.base import Retriever
from sciera.retrieve.bm25 import BM25Retriever
from sciera.retrieve.dense import DenseRetriever
from sciera.retrieve.hybrid import HybridRetriever
from sciera.retrieve.manifest import (
    bm25_params,
    check_record,
    dense_key,
    dense_params,
    index_dir,
    read_manifest,
)
from sciera.settings import Settings, load_settings
from sciera.vectors.registry import load_vector_index


class _Context:
    """What every opener needs: the store, its fingerprint and the manifest."""

    def __init__(self, corpus_dir: Path, settings: Settings, embedder: Embedder | None) -> None:
        self.corpus_dir = corpus_dir
        self.settings = settings
        self.embedder = embedder
        self.store = PassageStore.open(corpus_dir)
        self.fingerprint = self.store.fingerprint()
        self.passages = self.store.count_passages()
        self.manifest = read_manifest(corpus_dir)

    def check(self, key: str, expected: dict) -> None:
        check_record(self.manifest, key, self.corpus_dir, self.fingerprint, self.passages, expected)


def _open_bm25(ctx: _Context) -> Retriever:
    ctx.check("bm25", bm25_params(ctx.settings))
    directory = index_dir(ctx.corpus_dir) / "bm25"
    return BM25Retriever.load(directory, ctx.store, mmap=ctx.settings.bm25.mmap)


def _open_dense(ctx: _Context) -> Retriever:
    name = ctx.embedder.name if ctx.embedder is not None else embedder_name(ctx.settings.embed)
    key = dense_key(name)
    ctx.check(key, dense_params(ctx.settings, name))
    embedder = ctx.embedder or create_embedder(ctx.settings.embed, ctx.settings.home)
    backend = ctx.manifest.records[key].params["vectors"]  # type: ignore[union-attr]
    index = load_vector_index(backend, index_dir(ctx.corpus_dir) / key, ctx.settings.vectors)
    return DenseRetriever(embedder, index, ctx.store)


def _open_hybrid(ctx: _Context) -> Retriever:
    opts = ctx.settings.retrieve
    bm25, dense = _open_bm25(ctx), _open_dense(ctx)
    return HybridRetriever(
        {"bm25": bm25, "dense": dense},
        fusion=opts.fusion,
        weights={"bm25": opts.weights[0], "dense": opts.weights[1]},
        rrf_k=opts.rrf_k,
        depth=opts.passage_depth,
    )


RETRIEVERS: dict[str, Callable[[_Context], Retriever]] = {
    "bm25": _open_bm25,
    "dense": _open_dense,
    "hybrid": _open_hybrid,
}
"""The retriever names, opened on the embedded engine (bm25s + a vector index)."""


def _open_qdrant(kind: str) -> Callable[[_Context], Retriever]:
    def opener(ctx: _Context) -> Retriever:
        from sciera.retrieve.qdrant_engine import (
            QdrantEngine,
            QdrantRetriever,
            qdrant_key,
            qdrant_params,
        )

        name = ctx.embedder.name if ctx.embedder is not None else embedder_name(ctx.settings.embed)
        key = qdrant_key(name)
        ctx.check(key, qdrant_params(ctx.settings, name))
        embedder = ctx.embedder or create_embedder(ctx.settings.embed, ctx.settings.home)
        return QdrantRetriever(
            QdrantEngine(index_dir(ctx.corpus_dir) / key, ctx.settings, embedder), kind
        )

    return opener


def engine_of(ctx: _Context) -> str:
    """The engine to open: the settings', or for ``auto`` qdrant when the corpus holds
    only a qdrant index (built with ``--engine qdrant``), else embedded."""
    engine = ctx.settings.index.engine
    if engine != "auto":
        return engine
    records = ctx.manifest.records if ctx.manifest is not None else {}
    only_qdrant = records and all(r.kind == "qdrant" for r in records.values())
    return "qdrant" if only_qdrant else "embedded"


ENGINES: dict[str, dict[str, Callable[[_Context], Retriever]]] = {
    "embedded": RETRIEVERS,
    "qdrant": {kind: _open_qdrant(kind) for kind in RETRIEVERS},
}
"""``index.engine`` -> retriever name -> opener."""


def open_retriever(
    corpus_dir: str | Path,
    name: str,
    settings: Settings | None = None,
    embedder: Embedder | None = None,
    doc_ids: Iterable[str] | None = None,
) -> Retriever:
    """A ``"bm25"``, ``"dense"`` or ``"hybrid"`` retriever over ``corpus_dir``, on the
    engine ``settings.index.engine`` names (embedded, or one Qdrant collection).

    Checks the manifest against the store fingerprint and ``settings``; a missing
    or stale index raises :class:`~sciera.errors.StaleIndexError`. With
    ``settings.retrieve.sections`` it returns only passages of those section kinds
    (:class:`~sciera.retrieve.sections.SectionRetriever`). ``embedder``
    reuses an already loaded model (it must be the one the settings name). With
    ``doc_ids`` it returns only passages of those documents (an experiment's sub-corpus,
    :class:`~sciera.retrieve.subset.DocumentRetriever`, searching as deep as the corpus).
    """
    settings = settings or load_settings()
    if name not in RETRIEVERS:
        raise ScieraError(f"unknown retriever {name!r}; choose one of {sorted(RETRIEVERS)}")
    ctx = _Context(Path(corpus_dir), settings, embedder)
    opener = ENGINES[engine_of(ctx)][name]
    try:
        from sciera.retrieve.sections import keep_sections
        from sciera.retrieve.subset import keep_documents

        retriever = keep_documents(opener(ctx), doc_ids, ctx.passages)
        return keep_sections(retriever, settings.retrieve.sections)
    except BaseException:
        ctx.store.close()
        raise
