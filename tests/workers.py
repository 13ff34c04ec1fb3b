"""One core per pytest-xdist worker.

The suite runs on two workers (`-n 2` in pyproject.toml's addopts). Each gets one of the
two cores: torch, onnxruntime (which follows torch) and llama.cpp run one thread, in the
worker and in the `sciera` processes its tests start. Two workers with two threads each
would oversubscribe the cores, and their threads spin-wait for each other. Run alone
(`-n 0`), tests use two threads as before.
"""

from __future__ import annotations

import os
import sys

WORKER = os.environ.get("PYTEST_XDIST_WORKER")
TEST_THREADS = 1 if WORKER else 2


def pin_threads() -> None:
    """Set to one every thread count the worker and the processes it starts read (before
    torch is imported)."""
    if not WORKER:
        return
    for var in ("OMP_NUM_THREADS", "MKL_NUM_THREADS", "OPENBLAS_NUM_THREADS"):
        os.environ[var] = str(TEST_THREADS)
    os.environ["SCIERA_LLM__THREADS"] = str(TEST_THREADS)
    if "torch" in sys.modules:  # a plugin imported it first
        sys.modules["torch"].set_num_threads(TEST_THREADS)
