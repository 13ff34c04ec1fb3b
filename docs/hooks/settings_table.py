"""MkDocs hook: the settings reference is generated from ``sciera.settings.Settings`` at
build time, so docs/configuration.md cannot drift from the code.

A page writes ``<!-- settings-table -->`` (every setting) or ``<!-- presets-table -->``
(what each named preset changes) where the table goes.
"""

from __future__ import annotations

from typing import Any, Literal, get_args, get_origin

MARKER = "<!-- settings-table -->"
PRESETS_MARKER = "<!-- presets-table -->"


def _default(value: Any) -> str:
    if value is None:
        return "`None`"
    if isinstance(value, bool):
        return f"`{str(value).lower()}`"
    if isinstance(value, tuple):
        return "`" + ", ".join(str(v) for v in value) + "`"
    return f"`{value}`"


def _cell(text: str) -> str:
    return " ".join(text.split()).replace("|", "\\|")


def settings_rows() -> list[tuple[str, str, str, str]]:
    """(dotted key, environment variable, default, description) for every leaf setting."""
    from pydantic import BaseModel

    from sciera.settings import Settings

    rows: list[tuple[str, str, str, str]] = []

    def walk(model: type[BaseModel], prefix: list[str]) -> None:
        for name, field in model.model_fields.items():
            annotation = field.annotation
            if isinstance(annotation, type) and issubclass(annotation, BaseModel):
                walk(annotation, [*prefix, name])
                continue
            path = [*prefix, name]
            text = field.description or ""
            if get_origin(annotation) is Literal:
                text = f"{text} One of: " + ", ".join(f"`{a}`" for a in get_args(annotation))
            default = field.get_default(call_default_factory=True)
            if name == "home" and not prefix:
                default = "~/.cache/sciera"
            rows.append(
                (
                    ".".join(path),
                    "SCIERA_" + "__".join(p.upper() for p in path),
                    _default(default),
                    _cell(text),
                )
            )

    walk(Settings, [])
    return rows


def settings_table() -> str:
    lines = ["| setting | environment | default | meaning |", "|---|---|---|---|"]
    for key, env, default, text in settings_rows():
        lines.append(f"| `{key}` | `{env}` | {default} | {text} |")
    return "\n".join(lines)


def _flatten(data: dict[str, Any], prefix: str = "") -> list[tuple[str, Any]]:
    out: list[tuple[str, Any]] = []
    for key, value in data.items():
        if isinstance(value, dict):
            out += _flatten(value, f"{prefix}{key}.")
        else:
            out.append((f"{prefix}{key}", value))
    return out


def presets_table() -> str:
    from sciera.settings import PRESETS

    lines = ["| `--preset` | changes from the defaults |", "|---|---|"]
    for name, data in PRESETS.items():
        changes = ", ".join(f"`{k}` = {_default(v)}" for k, v in _flatten(data)) or "none"
        lines.append(f"| `{name}` | {changes} |")
    return "\n".join(lines)


def on_page_markdown(markdown: str, **kwargs: Any) -> str:
    if MARKER in markdown:
        markdown = markdown.replace(MARKER, settings_table())
    if PRESETS_MARKER in markdown:
        markdown = markdown.replace(PRESETS_MARKER, presets_table())
    return markdown
