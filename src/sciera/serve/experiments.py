"""Reports of ``sciera eval run`` under one folder: list them, read one, serve its plots.

An experiment is a results directory directly inside the folder: ``manifest.json``, and
after ``sciera eval report`` (which ``eval run`` calls) ``report/table.json``,
``report/table.md``, ``report/significance.json`` and the ``report/*.png`` plots.

A name or file in a URL is looked up in the listing and never joined to a path as given,
so ``..``, an absolute path or an encoded slash cannot reach outside the folder.
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

from sciera.serve.errors import NotFound, one_line

MANIFEST = "manifest.json"
REPORT = "report"


def _read_json(path: Path) -> Any:
    if not path.is_file():
        return None
    return json.loads(path.read_text(encoding="utf-8"))


class Experiments:
    """The results directories inside ``root`` (None: no experiments are served)."""

    def __init__(self, root: Path | None) -> None:
        self.root = Path(root) if root is not None else None

    def names(self) -> list[str]:
        """Folders holding a ``manifest.json``, sorted by name."""
        if self.root is None or not self.root.is_dir():
            return []
        return sorted(d.name for d in self.root.iterdir() if (d / MANIFEST).is_file())

    def folder(self, name: str) -> Path:
        """The results directory called ``name``; NotFound unless it is in the listing."""
        if self.root is None or name not in self.names():
            raise NotFound(f"no experiment {name!r}")
        return self.root / name

    def plots(self, name: str) -> list[str]:
        report = self.folder(name) / REPORT
        return sorted(p.name for p in report.glob("*.png") if p.is_file())

    def plot(self, name: str, file: str) -> Path:
        """The PNG ``file`` of experiment ``name``; NotFound unless it is listed."""
        if file not in self.plots(name):
            raise NotFound(f"experiment {name!r} has no plot {file!r}")
        return self.folder(name) / REPORT / file

    def summary(self, name: str) -> dict[str, Any]:
        """What the listing shows: experiment, dataset, pipelines, times, report, plots."""
        folder = self.folder(name)
        base: dict[str, Any] = {"name": name}
        try:
            manifest = _read_json(folder / MANIFEST) or {}
            spec = manifest.get("experiment", {})
            return {
                **base,
                "experiment": spec.get("name", name),
                "description": spec.get("description", ""),
                "dataset": manifest.get("dataset", {}),
                "pipelines": [p.get("name") for p in spec.get("pipelines", [])],
                "metrics": list(spec.get("metrics", [])),
                "created": manifest.get("created"),
                "updated": manifest.get("updated"),
                "report": (folder / REPORT / "table.json").is_file(),
                "plots": self.plots(name),
            }
        except (OSError, ValueError, AttributeError, TypeError) as exc:
            return {**base, "error": one_line(f"unreadable manifest.json: {exc}")}

    def detail(self, name: str) -> dict[str, Any]:
        """The summary, plus the run plan, finished repeats and the report's tables."""
        folder = self.folder(name)
        report = folder / REPORT
        out = self.summary(name)
        if "error" in out:
            return out
        manifest = _read_json(folder / MANIFEST)
        md = report / "table.md"
        try:
            table, significance = (
                _read_json(report / "table.json"),
                _read_json(report / "significance.json"),
            )
        except ValueError as exc:
            return {**out, "error": one_line(f"unreadable report: {exc}")}
        return {
            **out,
            "spec": manifest.get("experiment", {}),
            "plan": manifest.get("plan", {}),
            "repeats": manifest.get("repeats", {}),
            "table": table,
            "markdown": md.read_text(encoding="utf-8") if md.is_file() else None,
            "significance": significance,
        }
