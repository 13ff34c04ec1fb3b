"""Fixtures shared by the integration tests."""

from __future__ import annotations

import os
import shutil
import socket
import subprocess
import sys
import tempfile
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
    near-tie). The build alone runs TEST_THREADS threads (two, one under pytest-xdist), each
    Ray worker one (answers do not depend on the thread count:
    tests/integration/test_llamacpp.py)."""
    from sciera.settings import load_settings

    llm = {"model": "qwen2.5-coder-0.5b-instruct-q4_k_m", "cache": False, "threads": TEST_THREADS}
    return load_settings(llm={**llm, "prefix_reuse": False})


def _ray_start(cmd: list[str], env: dict[str, str]) -> None:
    done = subprocess.run(cmd, env=env, timeout=180, capture_output=True, text=True)
    if done.returncode:
        pytest.fail(f"{' '.join(cmd[1:3])} exited {done.returncode}:\n{done.stdout}\n{done.stderr}")


@pytest.fixture(scope="session")
def ray_cluster():
    """A head and a worker node on 127.0.0.1, one CPU each; stopped after the session."""
    exe = str(Path(sys.executable).parent / "ray")
    port = free_port()
    # not under pytest's basetemp: Ray's socket paths in it must fit in 107 bytes, and
    # /tmp/pytest-of-root/pytest-13/popen-gw1/ray0/session_.../sockets/... does not
    temp = Path(tempfile.mkdtemp(prefix="sciera-ray-"))
    # no token auth: a head that finds ~/.ray/auth_token (which `ray.init()` may leave
    # behind) demands it from the worker node and the driver
    os.environ["RAY_AUTH_MODE"] = "disabled"
    env = {**os.environ, "RAY_USAGE_STATS_ENABLED": "0"}
    common = ["--num-cpus", "1", "--disable-usage-stats"]
    head = [exe, "start", "--head", "--node-ip-address", "127.0.0.1", "--port", str(port)]
    address = f"127.0.0.1:{port}"
    try:
        _ray_start([*head, "--include-dashboard=false", f"--temp-dir={temp}", *common], env)
        _ray_start(
            [exe, "start", "--address", address, "--node-ip-address", "127.0.0.1", *common], env
        )
        yield address
    finally:
        subprocess.run([exe, "stop", "--force"], env=env, timeout=120, capture_output=True)
        shutil.rmtree(temp, ignore_errors=True)
