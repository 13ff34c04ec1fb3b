"""Every command the README and docs/*.md show is a real one.

A `sciera ...` command (in a code block, or an inline code span) must name a registered
subcommand, and every flag it writes must be one the real ``--help`` of that subcommand
lists (read from the Typer app's click parameters, in process). A `python benchmarks/X.py`
command (or a bare `X.py ...` naming a script in benchmarks/) may only use flags the script
defines.
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import pytest

ROOT = Path(__file__).resolve().parents[2]
DOCS = [ROOT / "README.md", *sorted((ROOT / "docs").rglob("*.md"))]

# Subcommands the docs describe while they are being built (issue 53): a line naming one is
# checked once the subcommand is registered; until then test_pending_subcommands reports it.
PENDING: set[str] = set()

FENCE = re.compile(r"^(`{3,})([^\n`]*)\n(.*?)^\1[ \t]*$", re.S | re.M)
# a code span may wrap onto the next line, not across a blank one
INLINE = re.compile(r"(?<!`)`((?:[^`\n]|\n(?!\s*\n))+)`(?!`)")
FLAG = re.compile(r"(?<![\w-])(--?[A-Za-z][A-Za-z0-9-]*)")
QUOTED = re.compile(r"\"[^\"]*\"|'[^']*'")
ENV = re.compile(r"^(?:[A-Z_][A-Z0-9_]*=\S*\s+)+")
WORD = re.compile(r"[a-z][a-z0-9-]*$")


@dataclass(frozen=True)
class Command:
    source: str  # "docs/x.md:LINE"
    text: str


def _strip_comment(line: str) -> str:
    return re.split(r"\s#\s", line, maxsplit=1)[0]


def _block_commands(body: str, source: str, first_line: int) -> list[Command]:
    """Commands in a code block; continuation lines (indented, or after a trailing
    backslash) join the command they continue."""
    out: list[Command] = []
    current: list[str] | None = None  # the command being read, None if not a command
    start = 0
    prev_continues = False
    for offset, raw in enumerate(body.splitlines()):
        line = _strip_comment(raw).rstrip()
        continues = prev_continues or (raw[:1].isspace() and line.strip() != "")
        if continues and current is not None:
            current.append(line.strip().rstrip("\\"))
        elif not continues:
            if current:
                out.append(Command(f"{source}:{start}", " ".join(current)))
            text = ENV.sub("", line.strip())
            if re.match(r"(?:sciera|python3? \S+\.py|\S+\.py)(?:\s|$)", text):
                current, start = [text.rstrip("\\")], first_line + offset
            else:
                current = None
        prev_continues = raw.rstrip().endswith("\\")
    if current:
        out.append(Command(f"{source}:{start}", " ".join(current)))
    return out


def doc_commands(path: Path) -> list[Command]:
    text = path.read_text()
    rel = path.relative_to(ROOT).as_posix()
    commands: list[Command] = []
    for m in FENCE.finditer(text):
        if m.group(2).strip() in {"json", "yaml", "python"}:
            continue
        first = text.count("\n", 0, m.start(3)) + 1
        commands += _block_commands(m.group(3), rel, first)
    outside = FENCE.sub(lambda m: "\n" * m.group(0).count("\n"), text)
    for m in INLINE.finditer(outside):
        span = ENV.sub("", " ".join(m.group(1).split()))
        if re.match(r"(?:sciera [a-z.]|python3? \S+\.py|[\w/]+\.py )", span):
            line = outside.count("\n", 0, m.start()) + 1
            commands.append(Command(f"{rel}:{line}", span))
    return commands


def _cli() -> Any:
    import typer.main

    from sciera.cli import _register, app

    _register()
    return typer.main.get_command(app)


def _options(command: Any) -> set[str]:
    names = {"--help"}
    for param in command.params:
        if param.param_type_name == "option":
            names.update(param.opts)
            names.update(param.secondary_opts)
    return names


def _leaves(command: Any) -> list[Any]:
    if hasattr(command, "commands"):
        return [leaf for sub in command.commands.values() for leaf in _leaves(sub)]
    return [command]


def check_sciera(cmd: Command, root: Any) -> str | None:
    """None if the command is a real one, else what is wrong."""
    tokens = QUOTED.sub(" ARG ", cmd.text).split()[1:]
    node, path = root, ["sciera"]
    while hasattr(node, "commands") and tokens:
        word = tokens[0]
        if word in node.commands:
            node = node.commands[word]
            path.append(tokens.pop(0))
        elif word in {"...", "…"}:
            break
        elif WORD.match(word):
            if len(path) == 1 and word in PENDING:
                return None
            return f"`{' '.join(path)} {word}`: no such subcommand"
        else:
            break
    rest = " ".join(tokens)
    flags = FLAG.findall(QUOTED.sub(" ", rest))
    allowed = set().union(*(_options(leaf) for leaf in _leaves(node))) | _options(node)
    unknown = [f for f in flags if f not in allowed]
    if unknown:
        return f"`{' '.join(path)}` has no option {', '.join(unknown)}"
    return None


def _script_path(text: str) -> Path | None:
    m = re.match(r"(?:python3? )?(\S+\.py)", text)
    if not m:
        return None
    name = m.group(1)
    for candidate in (ROOT / name, ROOT / "benchmarks" / name):
        if candidate.is_file():
            return candidate
    return None


def check_script(cmd: Command) -> str | None:
    script = _script_path(cmd.text)
    name = re.match(r"(?:python3? )?(\S+\.py)", cmd.text).group(1)  # type: ignore[union-attr]
    if script is None:
        return f"no script {name} (looked in the repository root and benchmarks/)"
    source = script.read_text()
    rest = QUOTED.sub(" ", cmd.text.split(name, 1)[1])
    unknown = [
        f
        for f in FLAG.findall(rest)
        if f"'{f}'" not in source and f'"{f}"' not in source and f != "--help"
    ]
    if unknown:
        return f"{name} defines no option {', '.join(unknown)}"
    return None


def _all_commands() -> list[Command]:
    return [c for path in DOCS for c in doc_commands(path)]


def test_commands_are_found():
    commands = _all_commands()
    sciera = [c for c in commands if c.text.startswith("sciera")]
    # the README's main job alone holds four; the docs show every subcommand
    assert len(sciera) >= 40, [c.text for c in sciera]
    shown = {" ".join(c.text.split()[:2]) for c in sciera}
    for sub in ("sciera ingest", "sciera index", "sciera search", "sciera ask", "sciera serve"):
        assert sub in shown


def test_every_sciera_command_is_real():
    root = _cli()
    problems = []
    for cmd in _all_commands():
        if cmd.text.startswith("sciera"):
            problem = check_sciera(cmd, root)
            if problem:
                problems.append(f"{cmd.source}: {problem}\n    {cmd.text}")
    assert not problems, "\n".join(problems)


def test_every_documented_registered_subcommand_is_documented_back():
    """Each registered subcommand appears in the docs, so a new one gets a page."""
    root = _cli()
    shown = " ".join(c.text for c in _all_commands())

    def walk(node: Any, path: list[str]) -> list[str]:
        if hasattr(node, "commands"):
            return [p for name, sub in node.commands.items() for p in walk(sub, [*path, name])]
        return [" ".join(path)]

    missing = [p for p in walk(root, ["sciera"]) if p not in shown]
    assert not missing, f"subcommands no doc shows: {missing}"


def test_every_benchmark_command_uses_real_flags():
    problems = []
    for cmd in _all_commands():
        if not cmd.text.startswith("sciera"):
            problem = check_script(cmd)
            if problem:
                problems.append(f"{cmd.source}: {problem}\n    {cmd.text}")
    assert not problems, "\n".join(problems)


def test_pending_subcommands():
    """A subcommand the docs show before it exists (PENDING) must exist by the time it is
    released: skipped while it is missing, and a reminder to empty PENDING once it lands."""
    root = _cli()
    shown = {
        c.text.split()[1] for c in _all_commands() if c.text.startswith("sciera ") and c.text[7:]
    }
    waiting = sorted((PENDING & shown) - set(root.commands))
    if waiting:
        pytest.skip(f"documented, not yet registered: {waiting} (issue 53)")
    assert not (PENDING & set(root.commands)), "registered now: remove it from PENDING"


# -- the checker itself, on known input -------------------------------------------------


def test_checker_catches_unknown_subcommands_and_flags():
    root = _cli()
    assert check_sciera(Command("x", "sciera search 'q' --corpus D -k 5"), root) is None
    assert (
        check_sciera(Command("x", "sciera train embedder R.yaml --overwrite/--no-overwrite"), root)
        is None
    )
    assert "no such subcommand" in check_sciera(Command("x", "sciera serach q"), root)
    assert "no option --bogus" in check_sciera(Command("x", "sciera ask q --bogus 1"), root)
    assert "no option --tau" in check_sciera(Command("x", "sciera search q --tau 0.5"), root)
    # an elided subcommand: the flag must belong to one of the group's commands
    assert (
        check_sciera(Command("x", "sciera train ... --calibration-questions N --ray"), root) is None
    )
    assert "no option" in check_sciera(Command("x", "sciera train ... --port 1"), root)


def test_block_parser_joins_continuations_and_skips_other_commands(tmp_path):
    body = (
        "SCIERA_API_KEY=k sciera serve --corpus c\n"
        "curl -s localhost:8000 \\\n"
        "     -d '{}'\n"
        "sciera eval run X.yaml [--out DIR]\n"
        "                [--ray local]   # a comment --not-a-flag\n"
    )
    cmds = _block_commands(body, "f.md", 1)
    assert [c.text for c in cmds] == [
        "sciera serve --corpus c",
        "sciera eval run X.yaml [--out DIR] [--ray local]",
    ]


# -- settings named in the docs ---------------------------------------------------------

# SCIERA_* variables the docs name that are not settings (each read where the comment says)
OTHER_ENV = {"SCIERA_API_KEY"}  # sciera serve / sciera mcp: the API key (cli/serve_cmds.py)
FILE_SUFFIXES = {"jsonl", "json", "sqlite", "md", "py", "yaml", "png", "gz", "tsv", "csv", "xml"}


def _settings_paths() -> set[str]:
    from pydantic import BaseModel

    from sciera.settings import Settings

    paths: set[str] = set()

    def walk(model: type[BaseModel], prefix: str) -> None:
        for name, field in model.model_fields.items():
            paths.add(prefix + name)
            annotation = field.annotation
            if isinstance(annotation, type) and issubclass(annotation, BaseModel):
                walk(annotation, f"{prefix}{name}.")

    walk(Settings, "")
    return paths


def settings_names(text: str, sections: set[str]) -> tuple[set[str], set[str]]:
    """(SCIERA_* variables, dotted settings keys such as `rerank.scorer`) a page names."""
    env = set(re.findall(r"\bSCIERA_[A-Z0-9_]*[A-Z0-9]", text))
    keys = set()
    for span in INLINE.findall(FENCE.sub("", text)):
        span = " ".join(span.split())
        m = re.match(r"([a-z_]+)\.([a-z_0-9]+)(?=$|[\s:=])", span)
        if m and m.group(1) in sections and m.group(2) not in FILE_SUFFIXES:
            keys.add(f"{m.group(1)}.{m.group(2)}")
    return env, keys


def test_every_setting_the_docs_name_exists():
    paths = _settings_paths()
    sections = {p for p in paths if "." not in p}
    problems = []
    for path in DOCS:
        env, keys = settings_names(path.read_text(), sections)
        rel = path.relative_to(ROOT).as_posix()
        for var in sorted(env - OTHER_ENV):
            key = var.removeprefix("SCIERA_").lower().replace("__", ".")
            if key not in paths:
                problems.append(f"{rel}: {var} is no setting")
        problems += [f"{rel}: `{k}` is no setting" for k in sorted(keys - paths)]
    assert not problems, "\n".join(problems)
    src = " ".join(p.read_text() for p in (ROOT / "src" / "sciera").rglob("*.py"))
    assert all(var in src for var in OTHER_ENV)


def test_settings_checker_on_known_input():
    env, keys = settings_names(
        "`SCIERA_LLM__MODEL`, `index.qdrant_local: edge`, `corpus.jsonl`, `llm.x=1`",
        {"llm", "index", "corpus"},
    )
    assert env == {"SCIERA_LLM__MODEL"}
    assert keys == {"index.qdrant_local", "llm.x"}
