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


def test_readme_is_short():
    """The README says what sciera is and how to start; everything else lives in docs/."""
    lines = (ROOT / "README.md").read_text().splitlines()
    assert len(lines) <= 300, len(lines)


def _anchors(page: Path) -> set[str]:
    """Heading ids as MkDocs' toc extension makes them ({#id}, else the slugified title)."""
    ids = set()
    text = re.sub(r"^(`{3,}).*?^\1", "", page.read_text(), flags=re.S | re.M)
    for title in re.findall(r"^#{1,6} (.+)$", text, flags=re.M):
        custom = re.search(r"\{#([\w-]+)\}\s*$", title)
        if custom:
            ids.add(custom.group(1))
            continue
        slug = re.sub(r"[^\w\s-]", "", title.strip().lower())
        ids.add(re.sub(r"[\s]+", "-", slug))
    return ids


def test_readme_links_resolve():
    readme = (ROOT / "README.md").read_text()
    links = re.findall(r"\]\(([^)\s]+)\)", readme)
    assert any(link.startswith("docs/") for link in links)
    for link in links:
        if link.startswith(("http://", "https://")):
            continue
        path, _, anchor = link.partition("#")
        target = ROOT / path
        assert target.exists(), f"README links to a missing file: {link}"
        if anchor:
            assert anchor in _anchors(target), f"README links to a missing anchor: {link}"
