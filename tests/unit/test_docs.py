"""docs/benchmarks.md: every results file it names is in the repository (the site's
`mkdocs build --strict` is tests/e2e/test_docs_build.py)."""

from __future__ import annotations

import itertools
import re
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]
RESULTS = ROOT / "benchmarks" / "results"
BENCHMARKS_PAGE = ROOT / "docs" / "benchmarks.md"

SPAN = re.compile(r"`((?:[^`\n]|\n(?!\s*\n))+)`|\]\(([^)\s]+)\)")
PATHLIKE = re.compile(r"^[\w.{},/*\[\]+-]+$")
RESULT_EXT = (".json", ".jsonl", ".png", ".md", ".csv", ".trec", ".gz", ".txt")
# outside the repository: the user's corpora and caches, the shared data, work folders
NOT_IN_REPO = ("corpora/", "../", "/", "$", "~", "SCIERA_HOME", "WORK/", "http")
TOKEN_SPLIT = re.compile(r"[\s;()]+|,(?![^{]*\})")


def _expand_braces(token: str) -> list[str]:
    """`a_{x,y}.json` -> `a_x.json`, `a_y.json` (shell brace expansion, one level each)."""
    parts = re.split(r"(\{[^{}]*\})", token)
    options = [p[1:-1].split(",") if p.startswith("{") else [p] for p in parts]
    return ["".join(choice) for choice in itertools.product(*options)]


def _exists(path: Path) -> bool:
    """The path, or its gzipped form (per-query files are being gzipped: x.jsonl -> .gz)."""
    return path.exists() or Path(f"{path}.gz").exists()


def _under_results(name: str) -> bool:
    """A bare or relative results name: some file under benchmarks/results ends with it."""
    name = name.rstrip("/")
    for candidate in (name, f"{name}.gz"):
        if (RESULTS / candidate).exists():
            return True
        if any(p.as_posix().endswith("/" + candidate) for p in RESULTS.rglob(Path(candidate).name)):
            return True
    return False


def named_paths(text: str) -> list[str]:
    """Repository paths and results file names a page names in code spans and links."""
    names: list[str] = []
    for m in SPAN.finditer(text):
        span = m.group(1) or m.group(2)
        for token in TOKEN_SPLIT.split(span):
            token = token.strip("'\"[]").rstrip(".:")
            if not token or not PATHLIKE.match(token) or token.startswith(NOT_IN_REPO):
                continue
            if ".work/" in token or any(p.split(".")[0].isupper() for p in token.split("/")):
                continue  # a training work folder, or a placeholder (DIR/sanity.json, NAME.py)
            if token.startswith("sciera/"):
                token = "src/" + token  # a path inside the package
            is_path = "/" in token or token.endswith((*RESULT_EXT, ".py", ".yaml"))
            if is_path and not token.startswith(("-", "@")) and "@" not in token:
                names.extend(_expand_braces(token))
    return names


def missing_paths(text: str) -> list[str]:
    missing = []
    for name in named_paths(text):
        if name.startswith(("...", "_")) or "[" in name or "*" in name:
            missing.append(f"{name} (write the full name)")
            continue
        if name.startswith(("benchmarks/", "src/", "tests/", "docs/", ".ci/", "recipes/")):
            ok = _exists(ROOT / name)
        elif name.startswith("results/"):
            ok = _exists(ROOT / "benchmarks" / name)
        elif name.endswith(".py"):
            ok = (ROOT / "benchmarks" / name).is_file() or (ROOT / name).is_file()
        elif name.endswith(".yaml"):
            ok = (ROOT / "benchmarks" / "experiments" / name).is_file()
        elif name.endswith(".md") and "/" not in name:
            ok = _under_results(name) or (BENCHMARKS_PAGE.parent / name).is_file()
        elif name.endswith(RESULT_EXT) or "/" in name:
            ok = _under_results(name)
        else:
            continue
        if not ok:
            missing.append(name)
    return sorted(set(missing))


def test_every_results_file_the_benchmarks_page_names_exists():
    text = BENCHMARKS_PAGE.read_text()
    names = named_paths(text)
    assert len(names) > 100  # the page names its results files
    assert not missing_paths(text), missing_paths(text)


def test_results_names_checker_on_known_input():
    assert missing_paths("`benchmarks/results/retrieval_scifact.json`") == []
    assert missing_paths("`results/no_such_result.json`") == ["results/no_such_result.json"]
    assert missing_paths("`retrieval_{scifact,nothere}.json`") == ["retrieval_nothere.json"]
    assert missing_paths("`..._fp32.json`") == ["..._fp32.json (write the full name)"]
    assert missing_paths("`corpora/x/instances.jsonl`, `DIR/sanity.json`") == []
