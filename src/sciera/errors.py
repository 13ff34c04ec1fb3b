"""Error types with messages a user can act on, and the optional-dependency guard."""

from __future__ import annotations

import importlib
from types import ModuleType


class ScieraError(Exception):
    """Base class: the CLI prints ``str(err)`` on one line and exits non-zero."""


class InputError(ScieraError):
    """A bad input record: names the file, the record (line) and the field."""

    def __init__(self, path: str, line: int | str | None, field: str, problem: str) -> None:
        self.path, self.line, self.field, self.problem = str(path), line, field, problem
        where = f"{path}:{line}" if line is not None else str(path)
        super().__init__(f"{where}: {field}: {problem}")


def require_query(text: str, what: str = "query") -> str:
    """``text`` stripped, or a one-line error when it is empty or whitespace only."""
    stripped = text.strip() if isinstance(text, str) else ""
    if not stripped:
        raise ScieraError(f"the {what} is empty; give some words to search for")
    return stripped


class StaleIndexError(ScieraError):
    """The index no longer matches the passage store."""


class MissingDependencyError(ScieraError, ImportError):
    """An optional backend was asked for but its extra is not installed."""


def require(module: str, extra: str) -> ModuleType:
    """Import ``module`` or raise an error naming the extra that provides it."""
    try:
        return importlib.import_module(module)
    except ImportError as exc:
        raise MissingDependencyError(
            f"{module} is not installed; install it with: pip install 'sciera[{extra}]' ({exc})"
        ) from exc
