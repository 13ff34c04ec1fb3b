"""The back-pressure loop every Ray job shares (``sciera.scale.cluster.stream`` over a
``ShardPool``), on a stand-in for Ray: at most one shard per actor in flight, every shard's
result returned once, no new shard sent after ``stop()``, and a pool that stops kills its
actors and waits for what they had in flight before the caller may leave the cluster."""

from __future__ import annotations

import itertools

import pytest

from sciera.scale.cluster import ShardPool, stream


class Ref:
    """An ObjectRef stand-in: finishes in submission order."""

    order = itertools.count()

    def __init__(self, actor: Actor, value: object) -> None:
        self.actor, self.value, self.n, self.failed = actor, value, next(Ref.order), False


class Actor:
    """An actor whose ``run.remote(i, shard)`` doubles the shard's items."""

    def __init__(self, ray: FakeRay) -> None:
        self.ray, self.dead = ray, False
        actor = self

        class run:  # the method name the pool calls
            @staticmethod
            def remote(i: int, shard: list[int]) -> Ref:
                ref = Ref(actor, (i, [2 * x for x in shard]))
                ray.in_flight.add(ref)
                ray.peak = max(ray.peak, len(ray.in_flight))
                ray.sent.append(i)
                return ref

        self.run = run


class FakeRay:
    """``wait``, ``get``, ``cancel`` and ``kill`` of the ``ray`` module, recording what was
    asked."""

    def __init__(self) -> None:
        self.in_flight: set[Ref] = set()
        self.sent: list[int] = []
        self.peak = 0
        self.waits: list[tuple[int, int]] = []  # (refs given, num_returns)
        self.events: list[str] = []

    def wait(self, refs, num_returns=1, timeout=None):
        self.waits.append((len(refs), num_returns))
        ready = sorted(refs, key=lambda r: r.n)[:num_returns]
        self.in_flight -= set(ready)
        self.events.append(f"waited {len(ready)}")
        return ready, [r for r in refs if r not in ready]

    def get(self, ref: Ref):
        if ref.failed:
            raise RuntimeError("ActorDiedError")
        return ref.value

    def cancel(self, ref: Ref) -> None:
        ref.failed = True  # Ray fails a cancelled task and does not retry it
        self.events.append("cancelled")

    def kill(self, actor: Actor) -> None:
        actor.dead = True
        for ref in self.in_flight:
            ref.failed = ref.failed or ref.actor is actor
        self.events.append("killed")


def _pool(actors: int) -> tuple[FakeRay, ShardPool]:
    ray = FakeRay()
    return ray, ShardPool(ray, [Actor(ray) for _ in range(actors)], "run")


def test_every_shard_once_with_at_most_one_per_actor_in_flight():
    ray, pool = _pool(actors=2)
    shards = [(i, [i, i + 10]) for i in range(5)]
    got = list(stream(pool, shards))
    assert sorted(got) == [(i, [2 * i, 2 * (i + 10)]) for i in range(5)]
    assert ray.peak == 2 and ray.sent == [0, 1, 2, 3, 4]
    assert not pool.has_next() and pool.has_free()


def test_stop_sends_no_new_shard_but_finishes_those_in_flight():
    ray, pool = _pool(actors=2)
    got: list = []
    out = stream(pool, [(i, [i]) for i in range(6)], stop=lambda: len(got) >= 1)
    for result in out:
        got.append(result)
    assert ray.sent == [0, 1] and [i for i, _ in got] == [0, 1]


def test_a_stopped_pool_cancels_kills_and_waits_for_all_it_had_in_flight():
    """A driver that stops reading (an error, a kill of the caller's loop) leaves shards in
    flight; leaving the cluster before Ray has failed them lets Ray retry them over a closed
    connection and end the process, so stop() cancels them (a cancelled task is not retried
    on its killed actor), kills the actors and waits for every one of them."""
    ray, pool = _pool(actors=3)
    out = stream(pool, [(i, [i]) for i in range(9)])
    assert next(out) == (0, [0])  # the caller reads one result, then stops
    out.close()
    actors = list(pool._actors)
    in_flight = len(ray.in_flight)
    assert in_flight == 2 and ray.sent == [0, 1, 2]  # shards 1 and 2 still running
    pool.stop()
    assert all(a.dead for a in actors)
    assert ray.waits[-1] == (in_flight, in_flight) and not ray.in_flight
    assert ray.events[-6:] == [
        *["cancelled"] * in_flight,
        *["killed"] * 3,
        f"waited {in_flight}",
    ]
    assert not pool.has_next() and not pool.has_free()
    before = list(ray.events)
    pool.stop()  # stopping again asks nothing more
    assert ray.events == before


def test_a_shard_whose_actor_died_raises_where_its_result_is_taken():
    ray, pool = _pool(actors=1)
    pool.submit(0, [1])
    ray.kill(pool._actors[0])
    with pytest.raises(RuntimeError, match="ActorDiedError"):
        pool.next_unordered()
