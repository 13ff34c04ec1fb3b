"""Synthetic training queries written on a real Ray cluster on loopback (head + one worker
node, the embedded 0.5B in each actor): a single-process run stopped part-way keeps its
records, the Ray run writes only the missing ones, and every record equals what an
uninterrupted single-process run writes."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from sciera.corpus import PassageStore
from sciera.llm.registry import make_llm
from sciera.retrieve import open_retriever
from sciera.retrieve.maxp import MaxPRetriever
from sciera.scale.executor import RayExecutor
from sciera.scale.options import RayOptions
from sciera.train import synthetic

pytestmark = pytest.mark.integration
pytest.importorskip("ray")
N = 4
KEEP = 3
DEPTH = 30


def _local(settings, corpus: Path, sources: list[str], cache: Path, progress=None):
    first = MaxPRetriever(open_retriever(corpus, "bm25", settings), depth=DEPTH)
    with PassageStore.open(corpus) as store:
        return synthetic.generate(
            make_llm(settings), store, sources, first, cache=cache, keep_top=KEEP, progress=progress
        )


class DriverDied(Exception):
    pass


def test_ray_writes_only_the_missing_queries_and_the_same_ones(
    ray_cluster, scifact_slice, tmp_path, ray_llm_settings
):
    settings = ray_llm_settings
    with PassageStore.open(scifact_slice) as store:
        sources = synthetic.pick_sources(store, list, set(), N, seed=4)
    alone = _local(settings, scifact_slice, sources, tmp_path / "alone.jsonl")

    def die_after_two(step: str, done: int, total: int) -> None:
        if done >= 2:
            raise DriverDied

    cache = tmp_path / "sharded.jsonl"
    with pytest.raises(DriverDied):
        _local(settings, scifact_slice, sources, cache, progress=die_after_two)
    key = synthetic.generation_key(make_llm(settings), "claim")
    calls = []
    with RayExecutor(RayOptions(ray_cluster, shard_size=1)) as executor:
        done = synthetic.generate_sharded(
            executor,
            settings,
            scifact_slice,
            "bm25",
            DEPTH,
            sources,
            key=key,
            cache=cache,
            style="claim",
            keep_top=KEEP,
            progress=lambda step, n, total: calls.append((n, total)),
        )
    assert calls[-1] == (N - 2, N - 2)  # the two logged passages were not asked again
    lines = [json.loads(line) for line in cache.read_text().splitlines()]
    assert sorted(r["passage_id"] for r in lines) == sorted(sources)
    # every passage's record (its query, or None when the LLM's was unusable, and its rank)
    # as alone: what the LLM writes differs across CPUs, so no count of usable queries
    assert done == synthetic.read_done(tmp_path / "alone.jsonl", key)
    assert synthetic.assemble(done, sources, KEEP) == alone
