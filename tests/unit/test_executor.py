"""The in-process executor: every shard once, in order, one worker per task (set up once
and reused while the same task is mapped again), no new shard after ``stop()``."""

from __future__ import annotations

from dataclasses import dataclass, field

import pytest

from sciera.errors import ScieraError
from sciera.executor import LocalExecutor, shards_of


@dataclass(frozen=True)
class Doubling:
    setups: list = field(default_factory=list)  # the threads each setup() was given

    def setup(self, threads):
        self.setups.append(threads)
        return lambda shard: [2 * x for x in shard]


def test_every_shard_in_order_with_one_setup_per_task():
    task = Doubling()
    ex = LocalExecutor(shard_size=2)
    shards = shards_of([1, 2, 3, 4, 5], ex.shard_size)
    assert shards == [[1, 2], [3, 4], [5]]
    assert list(ex.map(task, shards)) == [(0, [2, 4]), (1, [6, 8]), (2, [10])]
    assert list(ex.map(task, [[7]])) == [(0, [14])]
    assert task.setups == [None]  # the same task: the worker is kept (threads: the settings')
    other = Doubling()
    list(ex.map(other, [[1]]))
    assert other.setups == [None]
    ex.close()
    list(ex.map(task, [[1]]))
    assert task.setups == [None, None]  # closed: set up again


def test_stop_starts_no_new_shard():
    got: list = []
    for result in LocalExecutor().map(
        Doubling(), [[i] for i in range(5)], stop=lambda: len(got) >= 2
    ):
        got.append(result)
    assert [i for i, _ in got] == [0, 1]


def test_shard_size_is_checked():
    with pytest.raises(ScieraError, match="shard size must be at least 1"):
        LocalExecutor(shard_size=0)
