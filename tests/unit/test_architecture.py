"""The import graph of ``src/sciera`` keeps the architecture (docs/architecture.md, "Layers"):
the layers contract in pyproject.toml holds (import-linter: no module imports a higher
layer), and nothing imports itself back through other modules (no cycle between modules,
nor between the top-level packages). Imports inside functions and under ``TYPE_CHECKING``
count: a lazy import still ties two modules together."""

from __future__ import annotations

import sys
from collections.abc import Iterable, Mapping
from pathlib import Path

import grimp  # installed with import-linter (the dev extra)
import pytest
from importlinter import cli as importlinter_cli

PYPROJECT = Path(__file__).resolve().parents[2] / "pyproject.toml"


def test_the_layers_contract_is_kept(capsys):
    code = importlinter_cli.lint_imports(
        config_filename=str(PYPROJECT), no_cache=True, no_logo=True
    )
    report = capsys.readouterr().out
    assert code == 0, f"import-linter found imports that point up:\n{report}"


def cycles(nodes: Iterable[str], edges: Mapping[str, Iterable[str]]) -> list[list[str]]:
    """The strongly connected components of more than one node (Tarjan), each sorted."""
    index: dict[str, int] = {}
    low: dict[str, int] = {}
    stack: list[str] = []
    on_stack: set[str] = set()
    found: list[list[str]] = []

    def visit(v: str) -> None:
        index[v] = low[v] = len(index)
        stack.append(v)
        on_stack.add(v)
        for w in edges.get(v, ()):
            if w not in index:
                visit(w)
                low[v] = min(low[v], low[w])
            elif w in on_stack:
                low[v] = min(low[v], index[w])
        if low[v] == index[v]:
            component = []
            while True:
                w = stack.pop()
                on_stack.discard(w)
                component.append(w)
                if w == v:
                    break
            if len(component) > 1:
                found.append(sorted(component))

    limit = sys.getrecursionlimit()
    sys.setrecursionlimit(max(limit, 10_000))
    try:
        for node in sorted(nodes):
            if node not in index:
                visit(node)
    finally:
        sys.setrecursionlimit(limit)
    return sorted(found)


def test_cycles_finds_strongly_connected_components():
    edges = {"a": ["b"], "b": ["c"], "c": ["a", "d"], "d": [], "e": ["e"]}
    assert cycles("abcde", edges) == [["a", "b", "c"]]
    assert cycles("ab", {"a": ["b"]}) == []


@pytest.fixture(scope="module")
def graph():
    return grimp.build_graph("sciera", cache_dir=None)


def test_no_module_imports_itself_back(graph):
    modules = graph.modules
    edges = {m: graph.find_modules_directly_imported_by(m) for m in modules}
    assert cycles(modules, edges) == []


def test_no_two_top_level_packages_import_each_other(graph):
    """Siblings of one layer may import each other, never both ways."""

    def top(module: str) -> str:
        return ".".join(module.split(".")[:2])

    edges: dict[str, set[str]] = {}
    for m in graph.modules:
        for n in graph.find_modules_directly_imported_by(m):
            if top(m) != top(n):
                edges.setdefault(top(m), set()).add(top(n))
    assert cycles({top(m) for m in graph.modules}, edges) == []
