"""BM25 with ``bm25s`` (Lucene-compatible scoring by default; numba when installed).

Indexes :attr:`Passage.contents` (title + text). Parameters come from
:class:`~sciera.settings.BM25Settings`: passages k1=0.9, b=0.4, method "lucene".

Backend ``"auto"`` (default) uses bm25s' numba retrieval (when numba is installed)
only for big batches, ``queries x passages >= NUMBA_MIN_WORK``, and numpy otherwise:
numba compiles its functions on first use in every process (measured 25-35 s on a
busy 2-core machine), while numpy scores a SciFact query (6k passages) in under
1 ms. ``backend="numba"`` or ``"numpy"`` forces one.
"""

from __future__ import annotations

import json
import logging
from collections.abc import Callable, Iterable, Sequence
from importlib.util import find_spec
from pathlib import Path
from typing import Any

from sciera.errors import ScieraError, require
from sciera.retrieve.base import Hits, PassageSource, rankings_from_hits
from sciera.retrieve.tokenize import BM25Tokenizer
from sciera.settings import BM25Settings
from sciera.types import Passage, Ranking

logger = logging.getLogger(__name__)

IDS_FILE = "passage_ids.json"
SETTINGS_FILE = "sciera_bm25.json"
_NONOCCURRENCE_METHODS = ("bm25l", "bm25+")


NUMBA_MIN_WORK = 50_000_000  # queries x passages
BACKENDS = ("auto", "numpy", "numba")


def numba_available() -> bool:
    return find_spec("numba") is not None


def _check_backend(backend: str) -> str:
    if backend not in BACKENDS:
        raise ValueError(f"unknown bm25 backend {backend!r}; choose one of {BACKENDS}")
    if backend == "numba" and not numba_available():
        raise ScieraError("the numba backend needs numba: pip install 'sciera[fast]'")
    return backend


def _model_backend(backend: str) -> str:
    """bm25s' own backend at construction: numba only when forced (it compiles eagerly)."""
    return "numba" if _check_backend(backend) == "numba" else "numpy"


def index_token_ids(
    corpus_ids: list[list[int]],
    vocab: dict[str, int],
    settings: BM25Settings,
    backend: str = "auto",
) -> Any:
    """A bm25s model (k1, b and method from ``settings``) over documents given as token ids.

    The one place a bm25s model is configured: the retriever's index and the ``bm25``
    reranker (:mod:`sciera.rerank.bm25`) both build theirs here. Its ``vocab_dict`` maps
    tokens to ids (bm25s adds an empty token).
    """
    bm25s = require("bm25s", "core")
    model = bm25s.BM25(
        k1=settings.k1, b=settings.b, method=settings.method, backend=_model_backend(backend)
    )
    model.index((corpus_ids, vocab), show_progress=False)
    return model


class BM25Retriever:
    """A bm25s index over passages plus the passage ids in index order."""

    name = "bm25"

    def __init__(
        self,
        model: object,
        passage_ids: Sequence[str],
        vocab: dict[str, int],
        settings: BM25Settings,
        source: PassageSource,
        backend: str = "auto",
    ) -> None:
        self.backend = _check_backend(backend)
        self._model = model
        self.passage_ids = list(passage_ids)
        self._vocab = vocab
        self.settings = settings
        self.source = source
        self._tokenizer = BM25Tokenizer(settings)

    def __len__(self) -> int:
        return len(self.passage_ids)

    @classmethod
    def build(
        cls,
        passages: Iterable[Passage],
        settings: BM25Settings,
        source: PassageSource,
        progress: Callable[[int], None] | None = None,
        backend: str = "auto",
    ) -> BM25Retriever:
        """Tokenize and index ``passages`` (streamed); ``progress(n_done)`` every 1000."""
        tokenizer = BM25Tokenizer(settings)
        vocab: dict[str, int] = {}
        corpus_ids: list[list[int]] = []
        passage_ids: list[str] = []
        for n, passage in enumerate(passages, start=1):
            tokens = tokenizer.tokens(passage.contents)
            corpus_ids.append([vocab.setdefault(t, len(vocab)) for t in tokens])
            passage_ids.append(passage.passage_id)
            if progress is not None and n % 1000 == 0:
                progress(n)
        if progress is not None:
            progress(len(passage_ids))
        if not vocab:
            raise ScieraError("nothing to index: the passages contain no indexable tokens")
        model = index_token_ids(corpus_ids, vocab, settings, backend)
        return cls(model, passage_ids, model.vocab_dict, settings, source, backend)

    def save(self, directory: str | Path) -> None:
        path = Path(directory)
        path.mkdir(parents=True, exist_ok=True)
        self._model.save(str(path), show_progress=False)
        (path / IDS_FILE).write_text(json.dumps(self.passage_ids), encoding="utf-8")
        (path / SETTINGS_FILE).write_text(self.settings.model_dump_json(), encoding="utf-8")

    @classmethod
    def load(
        cls,
        directory: str | Path,
        source: PassageSource,
        backend: str = "auto",
        *,
        mmap: bool = False,
    ) -> BM25Retriever:
        """The index saved in ``directory``; ``mmap`` maps its score matrix from disk
        instead of reading it into RAM (same scores)."""
        bm25s = require("bm25s", "core")
        path = Path(directory)
        model = bm25s.BM25.load(
            str(path), backend=_model_backend(backend), show_progress=False, mmap=mmap
        )
        ids = json.loads((path / IDS_FILE).read_text(encoding="utf-8"))
        settings = BM25Settings.model_validate_json((path / SETTINGS_FILE).read_text("utf-8"))
        return cls(model, ids, model.vocab_dict, settings, source, backend)

    def _backend_for(self, n_queries: int) -> str:
        if self.backend != "auto":
            return self.backend
        work = n_queries * len(self.passage_ids)
        use_numba = work >= NUMBA_MIN_WORK and numba_available()
        return "numba" if use_numba else "numpy"

    def _query_ids(self, query: str) -> list[int]:
        return [self._vocab[t] for t in self._tokenizer.tokens(query) if t in self._vocab]

    def search_hits(self, queries: Sequence[str], k: int) -> list[Hits]:
        """Top-``k`` ``(passage_id, score)`` per query, without fetching passages."""
        token_ids = [self._query_ids(q) for q in queries]
        hits: list[Hits] = [[] for _ in queries]
        todo = [i for i, ids in enumerate(token_ids) if ids]
        k = min(int(k), len(self.passage_ids))
        if not todo or k <= 0:
            return hits
        self._model.backend = self._backend_for(len(todo))  # type: ignore[attr-defined]
        docs, scores = self._model.retrieve([token_ids[i] for i in todo], k=k, show_progress=False)
        keep_zero = self.settings.method in _NONOCCURRENCE_METHODS
        for i, rows, vals in zip(todo, docs, scores, strict=True):
            hits[i] = [
                (self.passage_ids[int(r)], float(s))
                for r, s in zip(rows, vals, strict=True)
                if keep_zero or s != 0.0
            ]
        return hits

    def search_many(self, queries: Sequence[str], k: int) -> list[Ranking]:
        queries = list(queries)
        return rankings_from_hits(queries, self.search_hits(queries, k), self.source, self.name)

    def search(self, query: str, k: int) -> Ranking:
        return self.search_many([query], k)[0]
