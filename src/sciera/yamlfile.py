"""YAML files validated by pydantic (experiments, training recipes): reading one and
turning a validation error into the one-line ``file: field.path: problem`` a user sees."""

from __future__ import annotations

from collections.abc import Sequence
from pathlib import Path
from typing import Any

import yaml
from pydantic import ValidationError

from sciera.errors import ScieraError


def read_yaml(path: Path) -> Any:
    """The content of the YAML file ``path``; a one-line error naming the file when it
    cannot be read or is not valid YAML."""
    try:
        return yaml.safe_load(path.read_text(encoding="utf-8"))
    except OSError as exc:
        raise ScieraError(f"{path}: cannot read: {exc.strerror}") from None
    except yaml.YAMLError as exc:
        raise ScieraError(f"{path}: not valid YAML: {str(exc).splitlines()[0]}") from None


def field_path(loc: Sequence[Any]) -> str:
    """A pydantic error location as a field path: ``stages.ingredients[0].epochs``."""
    out = ""
    for part in loc:
        out += f"[{part}]" if isinstance(part, int) else (f".{part}" if out else str(part))
    return out


def first_problem(exc: ValidationError) -> tuple[str, str, str]:
    """The first error of ``exc`` as (field path, message without pydantic's
    ``Value error,`` prefix, `` (and N more)`` when there are more errors, else "")."""
    err = exc.errors()[0]
    msg = str(err["msg"]).removeprefix("Value error, ")
    extra = f" (and {exc.error_count() - 1} more)" if exc.error_count() > 1 else ""
    return field_path(err["loc"]), msg, extra
