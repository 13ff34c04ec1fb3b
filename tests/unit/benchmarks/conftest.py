"""Benchmark scripts are not a package: tests load them by path."""

from __future__ import annotations

import importlib.util
import sys
from pathlib import Path
from types import ModuleType

import pytest

BENCHMARKS = Path(__file__).resolve().parents[3] / "benchmarks"


def load_script(name: str) -> ModuleType:
    """A script as ``python benchmarks/NAME.py`` runs it: its folder on the path, so it can
    import the scripts' shared helpers (``verify_common``)."""
    if str(BENCHMARKS) not in sys.path:
        sys.path.append(str(BENCHMARKS))
    spec = importlib.util.spec_from_file_location(name, BENCHMARKS / f"{name}.py")
    assert spec is not None and spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


@pytest.fixture(scope="module")
def bench(request: pytest.FixtureRequest) -> ModuleType:
    """The script a test module names in ``SCRIPT``."""
    return load_script(request.module.SCRIPT)
