"""A tiny real corpus for unit tests: a few documents ingested and BM25-indexed."""

from __future__ import annotations

import json
from collections.abc import Iterable
from pathlib import Path

from sciera.corpus.ingest import ingest
from sciera.retrieve.build import build_indexes
from sciera.settings import load_settings


def bm25_corpus(root: Path, docs: Iterable[tuple[str, str, str]]) -> Path:
    """``docs`` as (id, title, text), written as BEIR JSONL under ``root``, ingested into
    ``root/corpus`` and BM25-indexed; returns the corpus folder."""
    data = root / "docs.jsonl"
    data.write_text(
        "".join(json.dumps({"_id": i, "title": t, "text": x}) + "\n" for i, t, x in docs)
    )
    ingest(data, root / "corpus", format="beir")
    build_indexes(root / "corpus", load_settings(), which=["bm25"])
    return root / "corpus"
