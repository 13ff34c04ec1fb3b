"""Fixtures shared by the integration tests."""

from __future__ import annotations

import os
import socket
import subprocess
import sys
from pathlib import Path

import pytest

from workers import TEST_THREADS


def free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


@pytest.fixture(scope="session")
def ray_llm_settings():
    """Settings of the Ray tests that compare a worker's LLM output with a run alone: the
    0.5B, no response cache, and no KV prefix reuse (llama.cpp's kernels are not
    batch-invariant, so with reuse a worker that evaluated other prompts before can flip a
    near-tie). Alone it runs two threads, each worker one (answers do not depend on the
    thread count: tests/integration/test_llamacpp.py; one under pytest-xdist)."""
    from sciera.settings import load_settings

    llm = {"model": "qwen2.5-coder-0.5b-instruct-q4_k_m", "cache": False, "threads": TEST_THREADS}
    return load_settings(llm={**llm, "prefix_reuse": False})


@pytest.fixture(scope="session")
def ray_cluster(tmp_path_factory: pytest.TempPathFactory):
    """A head and a worker node on 127.0.0.1, one CPU each; stopped after the session."""
    exe = str(Path(sys.executable).parent / "ray")
    port = free_port()
    temp = tmp_path_factory.mktemp("ray")
    # no token auth: a head that finds ~/.ray/auth_token (which `ray.init()` may leave
    # behind) demands it from the worker node and the driver
    os.environ["RAY_AUTH_MODE"] = "disabled"
    env = {**os.environ, "RAY_USAGE_STATS_ENABLED": "0"}
    common = ["--num-cpus", "1", "--disable-usage-stats"]
    head = [exe, "start", "--head", "--node-ip-address", "127.0.0.1", "--port", str(port)]
    subprocess.run(
        [*head, "--include-dashboard=false", f"--temp-dir={temp}", *common],
        check=True,
        env=env,
        timeout=180,
        capture_output=True,
    )
    address = f"127.0.0.1:{port}"
    try:
        subprocess.run(
            [exe, "start", "--address", address, "--node-ip-address", "127.0.0.1", *common],
            check=True,
            env=env,
            timeout=180,
            capture_output=True,
        )
        yield address
    finally:
        subprocess.run([exe, "stop", "--force"], env=env, timeout=120, capture_output=True)
