"""faiss and Qdrant (in-memory and on disk) agree on real MiniLM embeddings of SciFact."""

from __future__ import annotations

import json
from pathlib import Path

import numpy as np
import pytest

from sciera.corpus import load_beir_queries
from sciera.embed import create_embedder
from sciera.settings import EmbedSettings
from sciera.vectors.faiss_index import FaissIndex
from sciera.vectors.qdrant_index import QdrantIndex

pytestmark = pytest.mark.integration


@pytest.fixture(scope="module")
def embedded(scifact_dir: Path):
    ids, texts = [], []
    with open(scifact_dir / "corpus.jsonl", encoding="utf-8") as fh:
        for line, _ in zip(fh, range(80), strict=False):
            rec = json.loads(line)
            ids.append(rec["_id"])
            texts.append(f"{rec['title']}\n{rec['text']}")
    queries = list(load_beir_queries(scifact_dir).values())[:20]
    embedder = create_embedder(EmbedSettings(backend="minilm"))
    return ids, embedder.embed_passages(texts), embedder.embed_queries(queries)


def test_faiss_and_qdrant_agree(embedded, tmp_path: Path) -> None:
    ids, passages, queries = embedded
    faiss_index = FaissIndex(384)
    faiss_index.add(ids, passages)
    brute = queries @ passages.T
    want = [[ids[j] for j in np.argsort(-row, kind="stable")[:10]] for row in brute]
    assert [[p for p, _ in hits] for hits in faiss_index.search(queries, 10)] == want

    memory = QdrantIndex(384)
    disk = QdrantIndex(384, path=tmp_path / "qdrant", collection="scifact")
    try:
        for index in (memory, disk):
            index.add(ids[:50], passages[:50])
            index.add(ids[50:], passages[50:])
            hits = index.search(queries, 10)
            assert [[p for p, _ in h] for h in hits] == want
            for h, row in zip(hits, brute, strict=True):
                assert [s for _, s in h] == pytest.approx(sorted(row, reverse=True)[:10], abs=1e-4)
    finally:
        memory.close()
        disk.close()
    reopened = QdrantIndex(384, path=tmp_path / "qdrant", collection="scifact")
    try:
        assert len(reopened) == len(ids)
        assert [[p for p, _ in h] for h in reopened.search(queries, 10)] == want
    finally:
        reopened.close()
