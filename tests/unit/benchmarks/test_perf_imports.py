"""benchmarks/perf/ keeps its import rules: each script imports the shared module
(``common``), the sciera library and third-party packages, never another script, never
``sciera.train``, and no import cycle.

The rules are read from the scripts' source (every ``import``, at the top or inside a
function) rather than stated in pyproject's import-linter contract: the scripts are not a
package (each runs as ``python benchmarks/perf/X.py`` with its folder first on the path, so
they import ``common``, a top-level name import-linter cannot place in a contract)."""

from __future__ import annotations

import ast
from collections.abc import Iterable, Mapping
from pathlib import Path

PERF = Path(__file__).resolve().parents[3] / "benchmarks" / "perf"
SHARED = "common"
FORBIDDEN = "sciera.train"


def imported(source: str) -> set[str]:
    """The dotted names a module's source imports (``from a import b`` gives ``a`` and
    ``a.b``, since ``b`` may be a module; a relative import gives its dots and module)."""
    names: set[str] = set()
    for node in ast.walk(ast.parse(source)):
        if isinstance(node, ast.Import):
            names.update(alias.name for alias in node.names)
        elif isinstance(node, ast.ImportFrom) and node.level:
            names.add("." * node.level + (node.module or ""))
        elif isinstance(node, ast.ImportFrom) and node.module:
            names.add(node.module)
            names.update(f"{node.module}.{alias.name}" for alias in node.names)
    return names


def problems(sources: Mapping[str, str]) -> list[str]:
    """What breaks the rules in ``{module name: source}`` (the perf folder's scripts)."""
    graph: dict[str, set[str]] = {}
    found = []
    for module, source in sorted(sources.items()):
        names = imported(source)
        tops = {name.split(".")[0] for name in names}
        graph[module] = tops & set(sources)
        if relative := sorted(name for name in names if name.startswith(".")):
            found.append(f"{module}: relative import {', '.join(relative)}")
        training = sorted(n for n in names if n == FORBIDDEN or n.startswith(FORBIDDEN + "."))
        if training:
            found.append(f"{module}: imports {training[0]}")
        for sibling in sorted(graph[module] - {SHARED, module}):
            found.append(f"{module}: imports the script {sibling} (only {SHARED} is shared)")
    found += [f"import cycle: {' -> '.join(c)}" for c in cycles(graph)]
    return found


def cycles(edges: Mapping[str, Iterable[str]]) -> list[list[str]]:
    """Each import cycle once, as the path that closes it (depth-first search)."""
    found: list[list[str]] = []
    seen: set[frozenset[str]] = set()

    def visit(node: str, path: list[str]) -> None:
        for nxt in sorted(edges.get(node, ())):
            if nxt in path:
                loop = path[path.index(nxt) :]
                if frozenset(loop) not in seen:
                    seen.add(frozenset(loop))
                    found.append([*loop, nxt])
            else:
                visit(nxt, [*path, nxt])

    for start in sorted(edges):
        visit(start, [start])
    return found


def perf_sources() -> dict[str, str]:
    return {path.stem: path.read_text(encoding="utf-8") for path in sorted(PERF.glob("*.py"))}


def test_perf_scripts_import_only_the_shared_module_and_not_training() -> None:
    sources = perf_sources()
    assert SHARED in sources and len(sources) > 5
    assert problems(sources) == []


def test_the_checker_finds_each_kind_of_problem() -> None:
    sources = {
        "common": "import json\n",
        "a": "from common import log\nimport sciera.corpus\n",
        "b": "def f():\n    from sciera.train.verifier_data import x\n",
        "c": "import d\nfrom sciera import train\n",
        "d": "from c import thing\nfrom . import common\nfrom .. import x\n",
    }
    assert problems(sources) == [
        "b: imports sciera.train.verifier_data",
        "c: imports sciera.train",
        "c: imports the script d (only common is shared)",
        "d: relative import ., ..",
        "d: imports the script c (only common is shared)",
        "import cycle: c -> d -> c",
    ]
    assert problems({"common": "", "a": "import common\nimport numpy\n"}) == []
