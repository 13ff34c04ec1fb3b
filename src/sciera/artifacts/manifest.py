"""A model folder's manifest (``sciera-manifest.json``): every file with its size and
sha256, written by training once the folder is complete and checked before first use.

:func:`write_manifest` lists every file of the folder except the card's README rendering
and the manifest itself. :func:`verify_folder` checks a folder against its manifest: each
listed file present with its size and sha256 (a digest is remembered for the process by
path, size and mtime, so a folder is hashed once), and no file the manifest does not list.
A mismatch raises :class:`~sciera.errors.ScieraError` and the folder is not used, as
:mod:`sciera.llm.weights` refuses an unverified GGUF file. A folder without a manifest
(trained before manifests, or made elsewhere) loads unchecked, unless the caller requires
one (the shipped models always carry theirs).

Also here, the two fingerprints that key what depends on a model's files:
:func:`folder_digest` (a reranker's identity in an experiment's results) and
:func:`weights_id` (an embedder's weights in cached vectors and built indexes).
"""

from __future__ import annotations

import hashlib
import json
from functools import lru_cache
from pathlib import Path
from typing import Any

from sciera.artifacts.files import MANIFEST_FILE, NOT_SCORING, README_FILE, write_atomic
from sciera.errors import ScieraError

FORMAT = 1
_CHUNK = 8 * 1024 * 1024
_UNLISTED = frozenset({README_FILE, MANIFEST_FILE})  # never in a manifest
WEIGHT_FILES = ("*.safetensors", "*.bin", "*.onnx")


def _sha256(path: Path) -> str:
    h = hashlib.sha256()
    with path.open("rb") as fh:
        while chunk := fh.read(_CHUNK):
            h.update(chunk)
    return h.hexdigest()


_digests: dict[str, tuple[int, int, str]] = {}  # path -> (size, mtime_ns, sha256)


def file_sha256(path: Path) -> str:
    """The file's sha256, remembered for this process while its size and mtime hold."""
    st = path.stat()
    key = str(path.resolve())
    known = _digests.get(key)
    if known is not None and known[:2] == (st.st_size, st.st_mtime_ns):
        return known[2]
    digest = _sha256(path)
    _digests[key] = (st.st_size, st.st_mtime_ns, digest)
    return digest


def _files(folder: Path) -> list[Path]:
    """The folder's files a manifest lists (hidden files and temporaries aside)."""
    return sorted(
        p
        for p in folder.rglob("*")
        if p.is_file()
        and p.name not in _UNLISTED
        and not any(part.startswith(".") for part in p.relative_to(folder).parts)
        and not p.name.endswith(".tmp")
    )


def write_manifest(folder: str | Path) -> dict[str, Any]:
    """List every file of ``folder`` with its size and sha256 in its manifest (written
    atomically, last: a folder whose manifest lists it is complete)."""
    folder = Path(folder)
    files = {
        f.relative_to(folder).as_posix(): {"size": f.stat().st_size, "sha256": file_sha256(f)}
        for f in _files(folder)
    }
    manifest = {"format": FORMAT, "files": files}
    write_atomic(folder / MANIFEST_FILE, json.dumps(manifest, indent=1, sort_keys=True) + "\n")
    return manifest


def read_manifest(folder: str | Path) -> dict[str, Any] | None:
    path = Path(folder) / MANIFEST_FILE
    if not path.is_file():
        return None
    try:
        manifest = json.loads(path.read_text(encoding="utf-8"))
    except ValueError as exc:
        raise ScieraError(f"{path}: not a valid manifest ({exc})") from None
    if not isinstance(manifest, dict) or not isinstance(manifest.get("files"), dict):
        raise ScieraError(f"{path}: not a valid manifest (no 'files' mapping)")
    return manifest


def _refuse(folder: Path, problem: str) -> ScieraError:
    return ScieraError(
        f"model folder {folder}: {problem}; it was not used. Reinstall sciera for a shipped "
        "model; retrain (or recalibrate) a trained one"
    )


def verify_folder(folder: str | Path, *, required: bool = False) -> str:
    """Check ``folder`` against its manifest (see the module); how it was checked.
    ``required``: a folder without a manifest is refused instead of loaded unchecked."""
    folder = Path(folder)
    manifest = read_manifest(folder)
    if manifest is None:
        if required:
            raise _refuse(folder, f"no {MANIFEST_FILE}")
        return f"no {MANIFEST_FILE} (not hash-checked)"
    listed: dict[str, Any] = manifest["files"]
    for name, entry in sorted(listed.items()):
        path = folder / name
        if not path.is_file():
            raise _refuse(folder, f"{name} is missing")
        size = path.stat().st_size
        if size != entry.get("size"):
            raise _refuse(folder, f"{name} has {size:,} bytes, the manifest {entry.get('size')}")
        digest = file_sha256(path)
        if digest != entry.get("sha256"):
            raise _refuse(folder, f"{name} has sha256 {digest}, the manifest {entry.get('sha256')}")
    extra = [f.relative_to(folder).as_posix() for f in _files(folder)]
    extra = [name for name in extra if name not in listed]
    if extra:
        raise _refuse(folder, f"{extra[0]} is not in its manifest")
    return f"verified ({len(listed)} files, sha256 against {MANIFEST_FILE})"


def folder_digest(folder: Path) -> str:
    """sha256 over a model folder's files (each name and the sha256 of its bytes; the files
    that score nothing, :data:`~sciera.artifacts.files.NOT_SCORING`, left out), first 16
    hex digits: a model's identity, so one retrained or replaced under the same name is
    told apart."""
    h = hashlib.sha256()
    for f in sorted(p for p in folder.rglob("*") if p.is_file() and p.name not in NOT_SCORING):
        h.update(f"{f.relative_to(folder).as_posix()}\0{file_sha256(f)}\0".encode())
    return h.hexdigest()[:16]


@lru_cache(maxsize=16)
def _hash_files(files: tuple[tuple[str, int, int], ...]) -> str:
    digest = hashlib.sha256()
    for path, _, _ in files:
        digest.update(Path(path).name.encode())
        with open(path, "rb") as fh:
            for block in iter(lambda: fh.read(1 << 20), b""):
                digest.update(block)
    return digest.hexdigest()[:16]


def weights_id(model: str) -> str | None:
    """A fingerprint of a local model folder's weight files (None for hub names), so a
    model retrained under the same name invalidates cached vectors and built indexes."""
    root = Path(model)
    if not root.is_dir():
        return None
    files = sorted({f for pattern in WEIGHT_FILES for f in root.rglob(pattern)})
    if not files:
        return None
    return _hash_files(tuple((str(f), f.stat().st_size, f.stat().st_mtime_ns) for f in files))
