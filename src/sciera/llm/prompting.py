"""Prompt templates kept as package data (``sciera/llm/prompts/*.yaml``).

A prompt file has the keys ``version``, ``system`` and ``user``; placeholders
use :class:`string.Template` syntax (``$question`` or ``${question}``, ``$$`` for
a literal dollar), so JSON examples need no brace escaping. Substituted values
are inserted once and never re-read as template text.

Passages are untrusted: put them in the prompt through :func:`delimit` /
:func:`delimit_passages`, which wrap each one in ``<passage id="n">...</passage>``
and neutralize anything inside that looks like a tag, so a passage cannot close
its block or open an instruction block of its own. The bundled system prompts
tell the model that block contents are data, never instructions.
"""

from __future__ import annotations

import html
import re
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from functools import lru_cache
from importlib import resources
from importlib.resources.abc import Traversable
from pathlib import Path
from string import Template

import yaml

from sciera.errors import InputError, ScieraError
from sciera.llm.base import Message
from sciera.types import Passage

_NAME = re.compile(r"^[a-z0-9][a-z0-9_]*$")
_LABEL = re.compile(r"^[a-z][a-z0-9_-]*$")
_INVISIBLE = "\u200b-\u200f\u2060\ufeff"
# "<" (or a look-alike) that would start a tag, comment or declaration
_TAG_START = re.compile(rf"[<\uff1c\ufe64]([\s{_INVISIBLE}]*/?[\s{_INVISIBLE}]*[A-Za-z!?])")
_KEYS = {"version", "system", "user"}


@dataclass(frozen=True, slots=True)
class PromptTemplate:
    """A versioned system + user prompt pair."""

    name: str
    version: str
    system: str
    user: str

    @property
    def variables(self) -> frozenset[str]:
        """Placeholder names used in the system and user templates."""
        names = Template(self.system).get_identifiers() + Template(self.user).get_identifiers()
        return frozenset(names)

    def render(self, **values: object) -> list[Message]:
        """Fill every placeholder (exactly the template's variables) -> [system, user]."""
        missing = self.variables - values.keys()
        extra = values.keys() - self.variables
        if missing or extra:
            raise ScieraError(
                f"prompt {self.name!r} v{self.version}: missing values {sorted(missing)}, "
                f"unknown values {sorted(extra)}"
            )
        text = {k: str(v) for k, v in values.items()}
        return [
            Message("system", Template(self.system).substitute(text)),
            Message("user", Template(self.user).substitute(text)),
        ]

    @classmethod
    def from_file(cls, path: Path) -> PromptTemplate:
        """Read and check a prompt YAML file (also for user-supplied prompts)."""
        try:
            data = yaml.safe_load(Path(path).read_text(encoding="utf-8"))
        except (OSError, yaml.YAMLError) as exc:
            raise InputError(str(path), None, "prompt", f"cannot read YAML: {exc}") from exc
        return cls.from_mapping(data, name=Path(path).stem, source=str(path))

    @classmethod
    def from_mapping(cls, data: object, *, name: str, source: str) -> PromptTemplate:
        if not isinstance(data, Mapping):
            raise InputError(source, None, "prompt", "expected a mapping with version/system/user")
        for key in data:
            if key not in _KEYS:
                raise InputError(source, None, str(key), f"unknown key; allowed: {sorted(_KEYS)}")
        for key in sorted(_KEYS):
            if key not in data or data[key] is None:
                raise InputError(source, None, key, "required key is missing")
        for key in ("system", "user"):
            if not isinstance(data[key], str):
                raise InputError(source, None, key, "must be a string")
            if not Template(data[key]).is_valid():
                raise InputError(source, None, key, "invalid $placeholder (use $$ for '$')")
        return cls(name, str(data["version"]), data["system"], data["user"])


def _prompt_dir() -> Traversable:
    return resources.files("sciera.llm").joinpath("prompts")


def list_prompts() -> list[str]:
    """Names of the bundled prompts."""
    return sorted(
        p.name.removesuffix(".yaml") for p in _prompt_dir().iterdir() if p.name.endswith(".yaml")
    )


@lru_cache(maxsize=64)
def load_prompt(name: str) -> PromptTemplate:
    """The bundled prompt ``prompts/<name>.yaml``."""
    if not _NAME.match(name):
        raise ScieraError(f"invalid prompt name {name!r}")
    entry = _prompt_dir().joinpath(f"{name}.yaml")
    if not entry.is_file():
        raise ScieraError(f"unknown prompt {name!r}; available: {', '.join(list_prompts())}")
    source = f"sciera/llm/prompts/{name}.yaml"
    try:
        data = yaml.safe_load(entry.read_text(encoding="utf-8"))
    except yaml.YAMLError as exc:
        raise InputError(source, None, "prompt", f"cannot read YAML: {exc}") from exc
    return PromptTemplate.from_mapping(data, name=name, source=source)


def neutralize(text: str) -> str:
    """Escape every tag-like ``<`` (``</passage``, ``<instructions``, ``<!--``) as ``&lt;``.

    A ``<`` followed by a digit or space-then-digit (``p < 0.05``) is left alone.
    """
    return _TAG_START.sub(r"&lt;\1", text)


def delimit(text: str, label: str = "passage", **attrs: object) -> str:
    """``text`` inside a ``<label attr="...">`` block it cannot escape."""
    if not _LABEL.match(label):
        raise ValueError(f"invalid block label {label!r}")
    rendered = "".join(
        f' {key}="{html.escape(str(value), quote=True)}"' for key, value in attrs.items()
    )
    return f"<{label}{rendered}>\n{neutralize(text)}\n</{label}>"


def delimit_passages(
    passages: Sequence[Passage | str],
    *,
    ids: Sequence[str] | None = None,
    label: str = "passage",
) -> str:
    """Each passage in its own block, ``id`` 1..n unless ``ids`` are given."""
    if ids is not None and len(ids) != len(passages):
        raise ValueError(f"{len(ids)} ids for {len(passages)} passages")
    blocks = []
    for i, passage in enumerate(passages):
        text = passage.contents if isinstance(passage, Passage) else passage
        blocks.append(delimit(text, label, id=ids[i] if ids is not None else i + 1))
    return "\n\n".join(blocks)
