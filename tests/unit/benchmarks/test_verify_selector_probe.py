"""verify_selector_probe.py: the re-picking rule (its adapters are sciera.embed.adapters',
tested in tests/unit/embed/test_adapters.py)."""

from __future__ import annotations

import numpy as np

SCRIPT = "verify_selector_probe"


def test_repick_keeps_the_best_and_those_within_the_gap(bench) -> None:
    x = np.array([0.0, 3.0, 2.5, -1.0, 1.2])
    assert bench.repick(x, 0.6) == (1, 2)
    assert bench.repick(x, 0.1) == (1,)
    assert bench.repick(x, 100.0) == (1, 2, 4)  # at most three
    assert bench.repick(np.array([1.0, 1.0]), 0.0) == (0, 1)  # ties stay in index order
