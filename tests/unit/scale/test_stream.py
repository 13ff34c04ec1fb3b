"""The back-pressure loop every Ray job shares (``sciera.scale.cluster.stream``), on a
stand-in for Ray's ActorPool: at most one shard per actor in flight, every shard's result
returned once, and no new shard sent after ``stop()``."""

from __future__ import annotations

from collections import deque

from sciera.scale.cluster import stream


class Doubler:
    """An actor whose ``run.remote(i, shard)`` doubles the shard's items."""

    class run:  # the method name stream() calls
        @staticmethod
        def remote(i: int, shard: list[int]) -> tuple[int, list[int]]:
            return i, [2 * x for x in shard]


class FakePool:
    """ActorPool's submit/has_free/get_next_unordered/has_next on ``actors`` workers that
    finish in submission order."""

    def __init__(self, actors: int) -> None:
        self.actors, self.running, self.peak = actors, deque(), 0
        self.sent: list[int] = []

    def submit(self, fn, value):
        self.running.append(fn(Doubler, value))
        self.sent.append(value[0])
        self.peak = max(self.peak, len(self.running))

    def has_free(self) -> bool:
        return len(self.running) < self.actors

    def get_next_unordered(self):
        return self.running.popleft()

    def has_next(self) -> bool:
        return bool(self.running)


def test_every_shard_once_with_at_most_one_per_actor_in_flight():
    pool = FakePool(actors=2)
    shards = [(i, [i, i + 10]) for i in range(5)]
    got = list(stream(pool, "run", shards))
    assert sorted(got) == [(i, [2 * i, 2 * (i + 10)]) for i in range(5)]
    assert pool.peak == 2 and pool.sent == [0, 1, 2, 3, 4]


def test_stop_sends_no_new_shard_but_finishes_those_in_flight():
    pool = FakePool(actors=2)
    got: list = []
    out = stream(pool, "run", [(i, [i]) for i in range(6)], stop=lambda: len(got) >= 1)
    for result in out:
        got.append(result)
    assert pool.sent == [0, 1] and [i for i, _ in got] == [0, 1]
