"""Where model folders are: the models sciera ships, the ones trained under
``SCIERA_HOME/models``, and :func:`open_model`, which every loader goes through.

A model name resolves, in order, to: a model sciera ships for that kind (:data:`SHIPPED`);
a model trained under a bare name (``home/models/<name>``, :func:`trained_dir`); a local
folder; or the name as given (a hub name, for a loader that can fetch one). A folder is
checked against its manifest before it is used (:func:`~sciera.artifacts.manifest.verify_folder`;
shipped folders must carry one) and its card, if any, is read.
"""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path
from typing import Any

from sciera.artifacts.card import read_card
from sciera.artifacts.manifest import verify_folder
from sciera.errors import ScieraError

_PACKAGE = (
    Path(__file__).resolve().parent.parent
)  # src/sciera: the shipped folders are package data

CROSS_ENCODER = "cross-encoder"
EMBEDDER = "embedder"
VERIFIER = "verifier"
SHIPPED: dict[str, dict[str, Path]] = {
    CROSS_ENCODER: {"scifact-minilm": _PACKAGE / "rerank" / "models" / "scifact-minilm"},
    EMBEDDER: {"scifact-minilm": _PACKAGE / "embed" / "models" / "scifact-minilm"},
    VERIFIER: {"scifact-verifier": _PACKAGE / "verify" / "models" / "scifact-verifier"},
}
"""The models sciera ships, by kind and name (the folders ship inside the package)."""


def shipped_dir(kind: str, name: str) -> Path | None:
    """The folder of the model of ``kind`` sciera ships as ``name``, if it ships one."""
    try:
        return SHIPPED[kind].get(name)
    except KeyError:
        raise ScieraError(f"unknown model kind {kind!r}; choose one of {sorted(SHIPPED)}") from None


def trained_dir(name: str, home: str | Path | None) -> Path | None:
    """The folder of a model trained under a bare ``name`` (``home/models/name``), if any;
    every loader of trained models resolves names through this one rule."""
    if home is None or "/" in name:
        return None
    path = Path(home) / "models" / name
    return path if path.is_dir() else None


def resolve(kind: str, model: str, home: str | Path | None = None) -> str:
    """A shipped name's folder, a trained name's folder under ``home/models``, or ``model``
    as given (a local path or a hub name)."""
    path = shipped_dir(kind, model)
    if path is not None:
        if not (path / "config.json").is_file():
            raise ScieraError(f"shipped {kind} {model!r} is missing from {path} (reinstall sciera)")
        return str(path)
    path = trained_dir(model, home)
    return str(path) if path is not None else model


@dataclass(frozen=True)
class ModelFolder:
    """A resolved model: ``path`` (a folder, or a hub name as given), its card (None for a
    model sciera did not train) and how its files were checked."""

    name: str
    path: str
    card: dict[str, Any] | None
    shipped: bool
    check: str


def open_model(kind: str, model: str, home: str | Path | None = None) -> ModelFolder:
    """Resolve ``model`` (see the module), check its folder against its manifest and read
    its card; a folder that fails the check raises and is not used."""
    shipped = shipped_dir(kind, model) is not None
    path = resolve(kind, model, home)
    if not Path(path).is_dir():
        return ModelFolder(model, path, None, shipped, "not a local folder (not hash-checked)")
    check = verify_folder(path, required=shipped)
    return ModelFolder(model, path, read_card(path), shipped, check)
