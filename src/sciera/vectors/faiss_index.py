"""Exact inner-product search with faiss ``IndexFlatIP`` (the embedded default)."""

from __future__ import annotations

import json
from collections.abc import Sequence
from pathlib import Path
from typing import Self

import numpy as np

from sciera.errors import require
from sciera.vectors.base import Hits, as_matrix, check_new_ids

INDEX_FILE = "index.faiss"
IDS_FILE = "ids.json"


class FaissIndex:
    """Brute-force (exact) maximum inner product over float32 vectors."""

    backend = "faiss"

    def __init__(self, dim: int) -> None:
        self._faiss = require("faiss", "dense")
        self.dim = int(dim)
        self._index = self._faiss.IndexFlatIP(self.dim)
        self._ids: list[str] = []
        # ids already added, for the duplicate check; built only when add() needs it (a
        # loaded index that is only searched never holds every id twice)
        self._known: set[str] | None = set()

    def __len__(self) -> int:
        return len(self._ids)

    def add(self, ids: Sequence[str], vectors: np.ndarray) -> None:
        matrix = as_matrix(vectors, self.dim)
        if self._known is None:
            self._known = set(self._ids)
        check_new_ids(ids, matrix.shape[0], self._known)
        self._index.add(matrix)
        self._ids.extend(ids)
        self._known.update(ids)

    def search(self, queries: np.ndarray, k: int) -> Hits:
        matrix = as_matrix(queries, self.dim, "queries")
        k = min(int(k), len(self._ids))
        if k <= 0:
            return [[] for _ in range(matrix.shape[0])]
        scores, rows = self._index.search(matrix, k)
        return [
            [(self._ids[r], float(s)) for r, s in zip(row, srow, strict=True) if r >= 0]
            for row, srow in zip(rows, scores, strict=True)
        ]

    def save(self, directory: str | Path) -> None:
        path = Path(directory)
        path.mkdir(parents=True, exist_ok=True)
        self._faiss.write_index(self._index, str(path / INDEX_FILE))
        (path / IDS_FILE).write_text(json.dumps(self._ids), encoding="utf-8")

    @classmethod
    def load(cls, directory: str | Path) -> Self:
        path = Path(directory)
        faiss = require("faiss", "dense")
        index = faiss.read_index(str(path / INDEX_FILE))
        ids = json.loads((path / IDS_FILE).read_text(encoding="utf-8"))
        if index.ntotal != len(ids):
            raise ValueError(f"{path}: {index.ntotal} vectors but {len(ids)} ids")
        self = cls(index.d)
        self._index = index
        self._ids = ids
        self._known = None
        return self
