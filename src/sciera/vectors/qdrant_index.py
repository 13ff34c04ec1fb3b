"""Qdrant through ``qdrant-client``: in-process (``:memory:`` or an on-disk ``path``)
or a Qdrant server / cluster (``url`` + ``api_key``).

Points get consecutive integer ids; the passage id lives in the payload under
``"passage_id"``. Distance is cosine, which equals inner product on the
normalized vectors sciera's embedders produce.
"""

from __future__ import annotations

import json
import os
from collections.abc import Iterator, Sequence
from pathlib import Path
from typing import Any, Self

import numpy as np

from sciera.errors import require
from sciera.vectors.base import Hits, as_matrix, check_new_ids

CONFIG_FILE = "qdrant.json"
LOCAL_DIR = "qdrant"
UPSERT_BATCH = 512
PAYLOAD_KEY = "passage_id"


class QdrantIndex:
    """A Qdrant collection behind the :class:`~sciera.vectors.base.VectorIndex` protocol.

    Exactly one of ``path`` (embedded, on disk) or ``url`` (server) may be given;
    neither means an in-memory collection (tests). ``recreate`` drops an existing
    collection of the same name first.
    """

    backend = "qdrant"

    def __init__(
        self,
        dim: int,
        *,
        path: str | Path | None = None,
        url: str | None = None,
        api_key: str | None = None,
        collection: str = "sciera",
        recreate: bool = False,
    ) -> None:
        if path is not None and url is not None:
            raise ValueError("give either path (embedded) or url (server), not both")
        qdrant = require("qdrant_client", "qdrant")
        self._models = qdrant.models
        self.dim = int(dim)
        self.collection = collection
        self.path = Path(path).resolve() if path is not None else None
        self.url = url
        if url is not None:
            self._client = qdrant.QdrantClient(url=url, api_key=api_key)
        elif self.path is not None:
            self._client = qdrant.QdrantClient(path=str(self.path))
        else:
            self._client = qdrant.QdrantClient(location=":memory:")
        if recreate and self._client.collection_exists(collection):
            self._client.delete_collection(collection)
        self._ids: list[str] = []
        if self._client.collection_exists(collection):
            self._ids = [pid for pid, _ in self._scroll(with_vectors=False)]
        else:
            self._client.create_collection(
                collection,
                vectors_config=self._models.VectorParams(
                    size=self.dim, distance=self._models.Distance.COSINE
                ),
            )
        self._known = set(self._ids)

    def __len__(self) -> int:
        return len(self._ids)

    def _scroll(self, with_vectors: bool) -> Iterator[tuple[str, Any]]:
        offset = None
        while True:
            records, offset = self._client.scroll(
                self.collection,
                limit=2048,
                offset=offset,
                with_payload=True,
                with_vectors=with_vectors,
            )
            for rec in sorted(records, key=lambda r: int(r.id)):
                yield rec.payload[PAYLOAD_KEY], rec.vector
            if offset is None:
                return

    def add(self, ids: Sequence[str], vectors: np.ndarray) -> None:
        matrix = as_matrix(vectors, self.dim)
        check_new_ids(ids, matrix.shape[0], self._known)
        start = len(self._ids)
        for lo in range(0, len(ids), UPSERT_BATCH):
            hi = min(lo + UPSERT_BATCH, len(ids))
            self._client.upsert(
                self.collection,
                points=self._models.Batch(
                    ids=list(range(start + lo, start + hi)),
                    vectors=matrix[lo:hi].tolist(),
                    payloads=[{PAYLOAD_KEY: pid} for pid in ids[lo:hi]],
                ),
                wait=True,
            )
        self._ids.extend(ids)
        self._known.update(ids)

    def search(self, queries: np.ndarray, k: int) -> Hits:
        matrix = as_matrix(queries, self.dim, "queries")
        k = min(int(k), len(self._ids))
        if k <= 0:
            return [[] for _ in range(matrix.shape[0])]
        requests = [
            self._models.QueryRequest(query=row.tolist(), limit=k, with_payload=True)
            for row in matrix
        ]
        responses = self._client.query_batch_points(self.collection, requests=requests)
        return [
            [(point.payload[PAYLOAD_KEY], float(point.score)) for point in resp.points]
            for resp in responses
        ]

    def save(self, directory: str | Path) -> None:
        """Write the connection config; an in-memory collection is copied to disk first."""
        directory = Path(directory).resolve()
        directory.mkdir(parents=True, exist_ok=True)
        config: dict[str, Any] = {"dim": self.dim, "collection": self.collection}
        if self.url is not None:
            config["url"] = self.url
        elif self.path is not None:
            config["path"] = os.path.relpath(self.path, directory)
        else:
            target = directory / LOCAL_DIR
            copy = QdrantIndex(self.dim, path=target, collection=self.collection, recreate=True)
            try:
                rows = list(self._scroll(with_vectors=True))
                if rows:
                    copy.add([pid for pid, _ in rows], np.asarray([vec for _, vec in rows]))
            finally:
                copy.close()
            config["path"] = LOCAL_DIR
        (directory / CONFIG_FILE).write_text(json.dumps(config, indent=2), encoding="utf-8")

    @classmethod
    def load(cls, directory: str | Path, api_key: str | None = None) -> Self:
        directory = Path(directory).resolve()
        config = json.loads((directory / CONFIG_FILE).read_text(encoding="utf-8"))
        if "url" in config:
            return cls(
                config["dim"], url=config["url"], api_key=api_key, collection=config["collection"]
            )
        return cls(config["dim"], path=directory / config["path"], collection=config["collection"])

    def close(self) -> None:
        """Release the client (an on-disk local collection is locked while open)."""
        self._client.close()
