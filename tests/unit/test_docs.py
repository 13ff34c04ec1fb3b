"""docs/benchmarks.md and docs/history.md: every results file they name is in the
repository; the current table's rows each name a command that exists; the README's headline
numbers are the current table's (the site's `mkdocs build --strict` is
tests/e2e/test_docs_build.py)."""

from __future__ import annotations

import itertools
import re
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]
RESULTS = ROOT / "benchmarks" / "results"
BENCHMARKS_PAGE = ROOT / "docs" / "benchmarks.md"
HISTORY_PAGE = ROOT / "docs" / "history.md"

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
        tokens = TOKEN_SPLIT.split(span)
        for i, token in enumerate(tokens):
            if i and tokens[i - 1] == "--out" and span.startswith("sciera eval run"):
                continue  # the folder the run writes: exists once it has run
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


def test_every_results_file_the_benchmarks_pages_name_exists():
    text = BENCHMARKS_PAGE.read_text() + "\n" + HISTORY_PAGE.read_text()
    names = named_paths(text)
    assert len(names) > 100  # the pages name their results files
    assert not missing_paths(text), missing_paths(text)


def test_results_names_checker_on_known_input():
    assert missing_paths("`benchmarks/results/retrieval_scifact.json`") == []
    assert missing_paths("`results/no_such_result.json`") == ["results/no_such_result.json"]
    assert missing_paths("`retrieval_{scifact,nothere}.json`") == ["retrieval_nothere.json"]
    assert missing_paths("`..._fp32.json`") == ["..._fp32.json (write the full name)"]
    assert missing_paths("`corpora/x/instances.jsonl`, `DIR/sanity.json`") == []
    run = "`sciera eval run benchmarks/experiments/x.yaml --out benchmarks/results/new`"
    assert missing_paths(run) == ["benchmarks/experiments/x.yaml"]


# The current table: docs/benchmarks.md's first table, under "## ... {#now}".
NOW_HEADING = re.compile(r"^## .*\{#now\}\s*$", re.M)
NUMBER = re.compile(r"(?<![\w.])\d+\.\d+%?|(?<![\w.])\d+%")
COMMAND = re.compile(r"`(sciera eval run [^`]+|python benchmarks/perf/[^`]+|sciera train [^`]+)`")
NAMED_FILE = re.compile(r"benchmarks/(?:experiments/[\w.-]+\.yaml|perf/[\w.-]+\.py)")


def current_table(page_text: str) -> list[list[str]]:
    """The rows (cells) of the first table after the {#now} heading, header excluded."""
    m = NOW_HEADING.search(page_text)
    assert m, "docs/benchmarks.md has no '## ... {#now}' heading"
    lines = page_text[m.end() :].splitlines()
    start = next(i for i, ln in enumerate(lines) if ln.startswith("|"))
    table = []
    for ln in lines[start:]:
        if not ln.startswith("|"):
            break
        table.append([c.strip() for c in ln.strip().strip("|").split(" | ")])
    return [row for row in table[2:]]  # past the header and the |---| line


def row_problems(row: list[str], root: Path = ROOT) -> list[str]:
    """A row must name a command (an eval YAML run, a perf script or a sciera train run),
    and every YAML or perf script it names must exist."""
    text = " | ".join(row)
    problems = []
    if not COMMAND.search(row[-1]):
        problems.append(f"row names no command: {row[0]}")
    for name in NAMED_FILE.findall(row[-1]):
        if not (root / name).is_file():
            problems.append(f"row names a missing file {name}: {row[0]}")
    if "SSLI_" in text or "TODO" in text:
        problems.append(f"row has a placeholder: {row[0]}")
    return problems


def test_every_current_row_names_a_command_that_exists():
    rows = current_table(BENCHMARKS_PAGE.read_text())
    assert len(rows) >= 10
    assert all(len(row) == 5 for row in rows), [row[0] for row in rows if len(row) != 5]
    problems = [p for row in rows for p in row_problems(row)]
    assert not problems, problems


def test_current_row_checker_on_known_input():
    page = (
        "## Now {#now}\n\n| what | measured | questions | paired | command |\n"
        "|---|---|---|---|---|\n"
        "| a | 0.5 | 3 | – | `sciera eval run benchmarks/experiments/scifact_ce_shipped.yaml` |\n"
        "| b | 0.5 | 3 | – | `python benchmarks/perf/no_such_script.py` |\n"
        "| c | 0.5 | 3 | – | measured by hand |\n"
    )
    rows = current_table(page)
    assert [row_problems(row) for row in rows] == [
        [],
        ["row names a missing file benchmarks/perf/no_such_script.py: b"],
        ["row names no command: c"],
    ]


def _headline_bullets(readme: str) -> list[str]:
    section = readme.split("## Headline numbers", 1)[1].split("\n## ", 1)[0]
    return [b for b in re.split(r"\n- ", section)[1:]]


def _section(page_text: str, anchor: str) -> str:
    """The text from the heading with {#anchor} to the next heading of any level."""
    m = re.search(r"^#{1,6} .*\{#" + re.escape(anchor) + r"\}\s*$", page_text, re.M)
    if not m:
        return ""
    nxt = re.search(r"^#{1,6} ", page_text[m.end() :], re.M)
    return page_text[m.end() : m.end() + nxt.start()] if nxt else page_text[m.end() :]


def headline_numbers_missing(readme: str, page: str, history: str) -> list[str]:
    """Numbers of README's headline bullets found neither in the current table nor in a
    history row the bullet links to."""
    table_numbers = set(NUMBER.findall("\n".join(" | ".join(r) for r in current_table(page))))
    missing = []
    for bullet in _headline_bullets(readme):
        linked = " ".join(_section(history, a) for a in re.findall(r"history\.md#([\w-]+)", bullet))
        for number in NUMBER.findall(bullet):
            if number not in table_numbers and number not in set(NUMBER.findall(linked)):
                missing.append(f"{number} ({' '.join(bullet.split()[:4])} ...)")
    return missing


def test_readme_headline_numbers_are_the_current_tables():
    readme = (ROOT / "README.md").read_text()
    assert len(_headline_bullets(readme)) >= 3
    missing = headline_numbers_missing(
        readme, BENCHMARKS_PAGE.read_text(), HISTORY_PAGE.read_text()
    )
    assert not missing, missing


def test_headline_checker_on_known_input():
    page = "## Now {#now}\n\n| a | b |\n|---|---|\n| x | 0.767 and 12.7% |\n"
    history = "### Old {#old}\n\nnDCG 0.701\n\n### Next {#next}\n\n0.555\n"
    readme = (
        "## Headline numbers\n\n- first 0.767, 12.7%\n- second 0.701 ([old](docs/history.md#old))"
        "\n- third 0.555 and 0.76\n\n## Links\n"
    )
    assert headline_numbers_missing(readme, page, history) == [
        "0.555 (third 0.555 and 0.76 ...)",
        "0.76 (third 0.555 and 0.76 ...)",
    ]
