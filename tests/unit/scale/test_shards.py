"""The Ray embedding job's shard stream (no cluster): uncached passages only, in store
order, cut into shards; a bad address fails fast with one line."""

from __future__ import annotations

import pytest

from sciera.errors import ScieraError
from sciera.scale.cluster import check_reachable
from sciera.scale.embed import missing_shards
from sciera.types import Passage


class Store:
    def __init__(self, n: int) -> None:
        self.passages = [Passage(f"d{i}#0", f"d{i}", 0, "", f"text {i}") for i in range(n)]

    def iter_passages(self):
        return iter(self.passages)


class Cache:
    def __init__(self, cached: set[str]) -> None:
        self.cached = cached

    def missing(self, texts):
        return [i for i, t in enumerate(texts) if t not in self.cached]


def test_only_uncached_texts_in_store_order_and_whole_shards():
    store = Store(5000)
    cached = {f"text {i}" for i in range(0, 5000, 2)}  # every even passage is cached
    shards = list(missing_shards(store, Cache(cached), shard_size=1000))
    assert [len(s) for s in shards] == [1000, 1000, 500]
    flat = [t for s in shards for t in s]
    assert flat == [f"text {i}" for i in range(1, 5000, 2)]
    assert list(missing_shards(store, Cache({p.contents for p in store.passages}), 10)) == []


def test_the_one_pass_counts_the_cached_passages_it_went_by():
    from sciera.scale.embed import _Scan

    store = Store(5000)
    scan = _Scan()
    shards = missing_shards(store, Cache({f"text {i}" for i in range(3000)}), 1000, scan)
    assert scan.cached == 0  # nothing read before the first shard is asked for
    first = next(shards)
    assert first[0] == "text 3000" and scan.cached == 3000
    assert sum(len(s) for s in shards) == 1000 and scan.cached == 3000


def test_an_address_nobody_listens_on_is_refused_at_once():
    with pytest.raises(ScieraError, match=r"cannot connect to the Ray cluster at '127\.0\.0\.1:1'"):
        check_reachable("127.0.0.1:1", timeout=2)
    check_reachable("auto")  # not HOST:PORT: left to Ray
