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


FULLTEXT = Path(__file__).resolve().parents[3] / "shared" / "data" / "fulltext"
"""Real CC BY articles (JATS XML and PDF) of the shared data."""


def fulltext_corpus(root: Path, names: Iterable[str], *, bm25: bool = True) -> Path:
    """The ``names`` files of :data:`FULLTEXT` copied under ``root``, ingested into
    ``root/c`` (and BM25-indexed); returns the corpus folder."""
    import shutil

    from sciera.corpus.library import ingest_folder

    folder = root / "in"
    folder.mkdir()
    for name in names:
        shutil.copy(FULLTEXT / name, folder / name)
    ingest_folder(folder, root / "c")
    if bm25:
        build_indexes(root / "c", load_settings(), which=["bm25"])
    return root / "c"
