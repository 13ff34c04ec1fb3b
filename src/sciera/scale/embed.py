"""Embed a corpus's passages on a Ray cluster, into the embedding cache, in shards.

    stats = embed_on_ray(corpus_dir, settings, "auto", shard_size=1024)
    build_indexes(corpus_dir, settings)   # every vector now comes from the cache

The driver streams the passages whose text is not cached yet, in store order, cut into
shards of ``shard_size``, in one pass over the store (the progress total is the store's
passage count; cached passages count as done as the scan passes them, so no counting pass
reads 60M passages twice). Ray starts only once a first uncached passage is found. One actor
per worker (``workers``, default: the cluster's CPUs) holds the embedder (one torch
thread each) and embeds whole shards; at most one shard per actor is in flight
(back-pressure: the driver reads on only as actors free up). Each finished shard is
written to ``SCIERA_HOME/embeddings.sqlite`` at once. So a killed worker (Ray restarts
the actor and retries its shard) or driver loses at most the shards in flight, and a
rerun embeds only what is missing. The actors must compute the vectors the driver's
embedder would: their identity (model, dimension, package versions, weights) is checked
against the driver's before any vector is kept.
"""

from __future__ import annotations

import itertools
import time
from collections.abc import Callable, Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from sciera.errors import ScieraError

Progress = Callable[[int, int], None]  # (passages cached or embedded so far, store's passages)


def _actor_class(ray: Any) -> Any:
    @ray.remote(num_cpus=1, max_restarts=2, max_task_retries=2)
    class EmbedActor:
        def __init__(self, embed_settings: dict, home: str) -> None:
            import torch

            from sciera.embed.cache import embedder_identity
            from sciera.embed.registry import create_embedder
            from sciera.settings import EmbedSettings

            torch.set_num_threads(1)
            self.embedder = create_embedder(EmbedSettings.model_validate(embed_settings), home)
            self.identity = embedder_identity(self.embedder)

        def who(self) -> str:
            return self.identity

        def embed(self, shard: int, texts: list[str]) -> tuple[int, Any]:
            return shard, self.embedder.embed_passages(texts)

    return EmbedActor


@dataclass
class _Scan:
    """How many passages the scan has passed that were cached already."""

    cached: int = 0


def _missing_batches(
    store: Any, cache: Any, batch: int = 2048, scan: _Scan | None = None
) -> Iterator[list[str]]:
    """The uncached passage texts in store order, looked up ``batch`` at a time."""
    texts: list[str] = []
    for passage in store.iter_passages():
        texts.append(passage.contents)
        if len(texts) == batch:
            yield _uncached(texts, cache, scan)
            texts = []
    if texts:
        yield _uncached(texts, cache, scan)


def _uncached(texts: list[str], cache: Any, scan: _Scan | None) -> list[str]:
    missing = [texts[i] for i in cache.missing(texts)]
    if scan is not None:
        scan.cached += len(texts) - len(missing)
    return missing


def missing_shards(
    store: Any, cache: Any, shard_size: int, scan: _Scan | None = None
) -> Iterator[list[str]]:
    """The uncached passage texts in store order, ``shard_size`` at a time (a text two
    passages share is embedded twice: harmless, and no set of every text is held)."""
    shard: list[str] = []
    for texts in _missing_batches(store, cache, scan=scan):
        for text in texts:
            shard.append(text)
            if len(shard) == shard_size:
                yield shard
                shard = []
    if shard:
        yield shard


def embed_on_ray(
    corpus_dir: str | Path,
    settings: Any,
    address: str,
    *,
    shard_size: int = 1024,
    workers: int | None = None,
    progress: Progress | None = None,
) -> dict[str, Any]:
    """Fill the embedding cache with every passage of ``corpus_dir`` (see the module)."""
    from sciera.corpus.store import PassageStore
    from sciera.embed.cache import CachedEmbedder, with_cache
    from sciera.embed.registry import create_embedder
    from sciera.scale.cluster import ShardPool, ray_cluster, stream, worker_cpus

    if not settings.embed.cache:
        raise ScieraError("--ray fills the embedding cache: turn embed.cache on")
    if shard_size < 1:
        raise ScieraError(f"--shard-size must be at least 1, got {shard_size}")
    cache = with_cache(create_embedder(settings.embed, settings.home), settings)
    assert isinstance(cache, CachedEmbedder)
    start = time.perf_counter()
    stats: dict[str, Any] = {"missing": 0, "embedded": 0, "shards": 0, "workers": 0}
    scan = _Scan()
    with PassageStore.open(corpus_dir) as store:
        total = store.count_passages()
        shards = missing_shards(store, cache, shard_size, scan)
        first = next(shards, None)
        if first is None:  # everything cached: no cluster needed
            return {**stats, "seconds": round(time.perf_counter() - start, 3)}
        with ray_cluster(address) as ray:
            n = workers or worker_cpus(ray)
            actor = _actor_class(ray)
            embed = settings.embed.model_dump(mode="json")
            actors = [actor.remote(embed, str(settings.home)) for _ in range(n)]
            for identity in ray.get([a.who.remote() for a in actors]):
                if identity != cache.identity:
                    raise ScieraError(
                        f"a Ray worker's embedder ({identity}) differs from this machine's "
                        f"({cache.identity}): install the same versions on every node"
                    )
            stats["workers"] = n
            pool = ShardPool(ray, actors, "embed")
            in_flight: dict[int, list[str]] = {}

            def sent() -> Iterator[tuple[int, list[str]]]:
                for i, texts in enumerate(itertools.chain([first], shards)):
                    stats["missing"] += len(texts)
                    in_flight[i] = texts
                    yield i, texts

            try:
                for shard, vectors in stream(pool, sent()):
                    texts = in_flight.pop(shard)
                    cache.put(texts, vectors)
                    stats["embedded"] += len(texts)
                    stats["shards"] += 1
                    if progress is not None:
                        progress(scan.cached + stats["embedded"], total)
            finally:
                pool.stop()  # before the connection closes (ShardPool)
    stats["seconds"] = round(time.perf_counter() - start, 3)
    return stats
