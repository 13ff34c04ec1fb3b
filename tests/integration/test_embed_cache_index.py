"""Re-indexing reuses cached passage vectors: identical results, no new vectors computed."""

import itertools
import json
import sqlite3

import pytest

from sciera.corpus import ingest
from sciera.retrieve.build import build_indexes
from sciera.retrieve.open import open_retriever
from sciera.settings import load_settings

pytestmark = pytest.mark.integration


def _slice(scifact_dir, folder, n=120):
    """A BEIR folder with the first ``n`` real SciFact abstracts."""
    folder.mkdir()
    with open(scifact_dir / "corpus.jsonl") as src, open(folder / "corpus.jsonl", "w") as out:
        for line in itertools.islice(src, n):
            out.write(line)
    return folder


def test_second_index_build_reuses_vectors(scifact_dir, tmp_path):
    settings = load_settings(home=tmp_path / "home")
    data = _slice(scifact_dir, tmp_path / "slice")
    first, second = tmp_path / "c1", tmp_path / "c2"
    for corpus in (first, second):
        ingest(data, corpus)
    cache = settings.home / "embeddings.sqlite"

    build_indexes(first, settings, which=("dense",))
    rows = sqlite3.connect(cache).execute("SELECT COUNT(*) FROM vectors").fetchone()[0]
    assert rows > 100

    build_indexes(second, settings, which=("dense",))
    assert sqlite3.connect(cache).execute("SELECT COUNT(*) FROM vectors").fetchone()[0] == rows

    query = "vitamin D and bone density"
    a = open_retriever(first, "dense", settings).search(query, 5)
    b = open_retriever(second, "dense", settings).search(query, 5)
    assert a.passage_ids == b.passage_ids
    assert [round(x.score, 5) for x in a] == [round(x.score, 5) for x in b]
    assert json.loads((second / "index" / "manifest.json").read_text())
