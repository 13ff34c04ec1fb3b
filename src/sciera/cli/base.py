"""The root Typer app every command module adds its commands to (``sciera.cli`` registers
the modules and runs it)."""

from __future__ import annotations

from collections.abc import Mapping
from typing import TYPE_CHECKING, Any

import typer

from sciera.errors import ScieraError

if TYPE_CHECKING:
    from sciera.settings import Settings

app = typer.Typer(
    name="sciera",
    help="Scientific QA over papers, robust to similar-but-irrelevant evidence.",
    no_args_is_help=True,
    pretty_exceptions_enable=False,
    add_completion=False,
)


def settings_error(exc: Exception, options: Mapping[str, str] | None = None) -> ScieraError:
    """A settings problem as one line: each invalid value by its setting path, and the
    option that sets it when ``options`` (setting path -> option) names one (an environment
    variable or a preset may have set it instead), with the value given."""
    from pydantic import ValidationError

    if not isinstance(exc, ValidationError):  # an unknown preset
        return ScieraError(str(exc))
    problems = []
    for e in exc.errors(include_url=False):
        path = ".".join(map(str, e["loc"]))
        option = (options or {}).get(path)
        name = f"{option} (setting {path})" if option else f"setting {path}"
        value = e.get("input")
        given = "" if value is None or isinstance(value, dict) else f" (got {value!r})"
        problems.append(f"{name}: {e['msg']}{given}")
    return ScieraError("; ".join(problems))


def options_settings(
    preset: str | None,
    overrides: Mapping[str, Mapping[str, Any]],
    options: Mapping[str, str] | None = None,
) -> Settings:
    """The settings of ``preset`` with a command's option values (``{section: {field:
    value}}``; None: not given, left out); an invalid value is a one-line error naming its
    option (``options``: setting path, e.g. ``filter.top_k``, -> option, ``--top-k``)."""
    from pydantic import ValidationError

    from sciera.settings import load_settings

    clean = {k: {n: v for n, v in d.items() if v is not None} for k, d in overrides.items()}
    try:
        return load_settings(preset, **{k: v for k, v in clean.items() if v})
    except (ValidationError, ValueError) as exc:
        raise settings_error(exc, options) from exc
