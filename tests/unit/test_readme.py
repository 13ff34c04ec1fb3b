"""Executable docs: the README's two commands are exactly what CI runs."""

import re
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]


def _bash_blocks(text: str) -> list[list[str]]:
    blocks = re.findall(r"```bash\n(.*?)```", text, flags=re.S)
    return [[ln for ln in b.splitlines() if ln.strip()] for b in blocks]


def test_readme_commands_are_what_ci_runs():
    readme = (ROOT / "README.md").read_text()
    ci_lines = [ln.strip() for ln in (ROOT / ".ci" / "run").read_text().splitlines()]
    install, test = _bash_blocks(readme)[:2]
    for line in [*install, *test]:
        assert line.strip() in ci_lines, f"README command not run by .ci/run: {line}"
    # the install block starts with the torch pin before anything needing torch
    assert install.index("pip install torch==2.13.0") < next(
        i for i, ln in enumerate(install) if "pip install -e" in ln
    )
    assert any("pytest" in ln for ln in test)
