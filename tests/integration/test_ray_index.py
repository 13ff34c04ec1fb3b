"""`sciera index --ray` on a real Ray cluster on loopback (`ray start --head` plus one
worker node): passages are embedded in shards by actors on the cluster; a driver that dies
part-way loses only what was in flight, a rerun embeds only what is missing, and the index
built from the cache equals the single-process one."""

from __future__ import annotations

import shutil
from pathlib import Path

import numpy as np
import pytest

from sciera.corpus import ingest
from sciera.corpus.store import PassageStore
from sciera.embed.cache import with_cache
from sciera.embed.registry import create_embedder
from sciera.retrieve import build_indexes
from sciera.retrieve.open import open_retriever
from sciera.settings import load_settings

pytestmark = pytest.mark.integration
ray = pytest.importorskip("ray")
N_DOCS = 48
SHARD = 16


@pytest.fixture
def corpus(scifact_dir: Path, tmp_path: Path) -> Path:
    lines = (scifact_dir / "corpus.jsonl").read_text(encoding="utf-8").splitlines()[:N_DOCS]
    (tmp_path / "c.jsonl").write_text("\n".join(lines) + "\n", encoding="utf-8")
    ingest(tmp_path / "c.jsonl", tmp_path / "corpus", format="beir")
    return tmp_path / "corpus"


def test_ray_shards_resume_and_build_the_single_process_index(ray_cluster, corpus, tmp_path):
    from sciera.scale.embed import embed_on_ray

    settings = load_settings(home=str(tmp_path / "ray-home"), embed={"backend": "minilm"})
    with PassageStore.open(corpus) as store:
        texts = [p.contents for p in store.iter_passages()]

    class DriverDied(Exception):
        pass

    def die_after_two(done: int, total: int) -> None:
        if done >= 2 * SHARD:
            raise DriverDied

    with pytest.raises(DriverDied):
        embed_on_ray(corpus, settings, ray_cluster, shard_size=SHARD, progress=die_after_two)
    cache = with_cache(create_embedder(settings.embed, settings.home), settings)
    left = len(cache.missing(texts))
    assert 0 < left <= len(texts) - 2 * SHARD  # the finished shards were kept
    stats = embed_on_ray(corpus, settings, ray_cluster, shard_size=SHARD)
    assert stats["missing"] == left and stats["embedded"] == left and stats["workers"] == 2
    assert cache.missing(texts) == []
    alone = create_embedder(settings.embed, settings.home).embed_passages(texts)
    assert np.allclose(cache.embed_passages(texts), alone, atol=1e-5)
    assert cache.misses == 0  # every vector came from the shards
    build_indexes(corpus, settings, which=["dense"])
    single = tmp_path / "single"
    shutil.copytree(corpus, single)
    solo = load_settings(home=str(tmp_path / "solo-home"), embed={"backend": "minilm"})
    build_indexes(single, solo, which=["dense"])
    queries = ["vitamin D and bone density", "tumor suppressor genes in cancer"]
    a = open_retriever(corpus, "dense", settings).search_many(queries, 10)
    b = open_retriever(single, "dense", solo).search_many(queries, 10)
    for ra, rb in zip(a, b, strict=True):
        assert [i.passage_id for i in ra] == [i.passage_id for i in rb]
        assert [i.score for i in ra] == pytest.approx([i.score for i in rb], abs=1e-5)


def test_a_bad_address_is_one_line(corpus, tmp_path):
    from sciera.errors import ScieraError
    from sciera.scale.embed import embed_on_ray

    settings = load_settings(home=str(tmp_path / "h"), embed={"backend": "minilm"})
    with pytest.raises(ScieraError, match="cannot connect to the Ray cluster"):
        embed_on_ray(corpus, settings, "127.0.0.1:1", shard_size=SHARD)
