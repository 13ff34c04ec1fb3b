"""The documentation site builds offline with `mkdocs build --strict`: no warning, so no
broken link or anchor and no API object mkdocstrings cannot find (about 6 s)."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

import pytest

pytestmark = pytest.mark.e2e

ROOT = Path(__file__).resolve().parents[2]


def test_mkdocs_build_strict_offline(tmp_path):
    """The whole site, API reference included, builds with no warning and no network."""
    env = {
        **os.environ,
        "NO_MKDOCS_2_WARNING": "1",
        # no route to the network: a plugin that tried to fetch would fail the build
        "HTTP_PROXY": "http://127.0.0.1:9",
        "HTTPS_PROXY": "http://127.0.0.1:9",
        "http_proxy": "http://127.0.0.1:9",
        "https_proxy": "http://127.0.0.1:9",
        "NO_PROXY": "",
        "no_proxy": "",
    }
    proc = subprocess.run(
        [sys.executable, "-m", "mkdocs", "build", "--strict", "--site-dir", str(tmp_path / "site")],
        cwd=ROOT,
        env=env,
        capture_output=True,
        text=True,
        timeout=600,
    )
    log = proc.stdout + proc.stderr
    assert proc.returncode == 0, log
    warnings = [ln for ln in log.splitlines() if ln.startswith(("WARNING", "ERROR"))]
    assert not warnings, "\n".join(warnings)
    site = tmp_path / "site"
    for page in ("index.html", "benchmarks/index.html", "api/rerank/index.html"):
        assert (site / page).is_file(), page
    # the API reference rendered the packages' objects, not just their titles
    api = (site / "api" / "retrieve" / "index.html").read_text()
    assert 'id="sciera.retrieve.open_retriever"' in api
    # the settings reference is generated from sciera.settings (docs/hooks/settings_table.py)
    config = (site / "configuration" / "index.html").read_text()
    assert "SCIERA_LLM__MODEL" in config and "settings-table" not in config
