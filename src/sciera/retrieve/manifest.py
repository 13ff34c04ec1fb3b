"""``DIR/index/manifest.json``: what each index was built from, and the staleness check.

One record per index (``"bm25"``, ``"dense-<embedder>"``) holding the store
fingerprint and passage count it was built from, its parameters, library
versions, build time and duration. An index whose record does not match the
current store or settings is stale and is never used silently. The parameters each kind
must match come from :func:`bm25_params` and :func:`dense_params` (what the builder records,
the opener checks and the Qdrant engine stores with its collection).
"""

from __future__ import annotations

import json
import os
from collections.abc import Iterable, Mapping
from dataclasses import asdict, dataclass, field
from importlib import metadata
from pathlib import Path
from typing import TYPE_CHECKING, Any

from sciera.errors import StaleIndexError

if TYPE_CHECKING:
    from sciera.settings import Settings

INDEX_DIR = "index"
MANIFEST_FILE = "manifest.json"
FORMAT_VERSION = 1


@dataclass(frozen=True)
class IndexRecord:
    """How one index was built."""

    kind: str  # "bm25" | "dense"
    fingerprint: str  # store fingerprint at build time
    passages: int
    params: Mapping[str, Any]
    libraries: Mapping[str, str]
    built_at: str  # ISO 8601, UTC
    seconds: float


@dataclass(frozen=True)
class Manifest:
    """All index records of one corpus directory, keyed by index name."""

    records: Mapping[str, IndexRecord] = field(default_factory=dict)

    def with_records(self, new: Mapping[str, IndexRecord]) -> Manifest:
        return Manifest({**self.records, **new})

    def to_json(self) -> str:
        data = {
            "format": FORMAT_VERSION,
            "indexes": {key: asdict(rec) for key, rec in sorted(self.records.items())},
        }
        return json.dumps(data, indent=2, sort_keys=True)

    @classmethod
    def from_json(cls, text: str) -> Manifest:
        data = json.loads(text)
        if data.get("format") != FORMAT_VERSION:
            raise StaleIndexError(f"index manifest format {data.get('format')!r} is not supported")
        return cls({key: IndexRecord(**rec) for key, rec in data["indexes"].items()})


def index_dir(corpus_dir: str | Path) -> Path:
    return Path(corpus_dir) / INDEX_DIR


def read_manifest(corpus_dir: str | Path) -> Manifest | None:
    path = index_dir(corpus_dir) / MANIFEST_FILE
    if not path.is_file():
        return None
    return Manifest.from_json(path.read_text(encoding="utf-8"))


def write_manifest(corpus_dir: str | Path, manifest: Manifest) -> Path:
    """Write atomically (temp file + rename)."""
    path = index_dir(corpus_dir) / MANIFEST_FILE
    path.parent.mkdir(parents=True, exist_ok=True)
    tmp = path.with_suffix(f".tmp{os.getpid()}")
    tmp.write_text(manifest.to_json(), encoding="utf-8")
    os.replace(tmp, path)
    return path


def library_versions(distributions: Iterable[str]) -> dict[str, str]:
    """Installed versions of the named distributions (missing ones are left out)."""
    out = {}
    for name in distributions:
        try:
            out[name] = metadata.version(name)
        except metadata.PackageNotFoundError:
            continue
    return out


def _rebuild_hint(corpus_dir: str | Path) -> str:
    return f"run `sciera index --corpus {corpus_dir}`"


def check_record(
    manifest: Manifest | None,
    key: str,
    corpus_dir: str | Path,
    fingerprint: str,
    passages: int,
    expected: Mapping[str, Any],
) -> IndexRecord:
    """The record for ``key`` if it matches the store and ``expected`` params, else raise.

    Raises :class:`StaleIndexError` whose message tells the user how to rebuild.
    """
    hint = _rebuild_hint(corpus_dir)
    if manifest is None:
        raise StaleIndexError(f"no index found in {index_dir(corpus_dir)}; {hint}")
    record = manifest.records.get(key)
    if record is None:
        built = ", ".join(sorted(manifest.records)) or "none"
        raise StaleIndexError(f"no {key} index for {corpus_dir} (built: {built}); {hint}")
    if record.fingerprint != fingerprint:
        raise StaleIndexError(
            f"the {key} index is stale: the passages changed since it was built "
            f"({record.passages} passages then, {passages} now); {hint}"
        )
    differ = {
        name: (record.params.get(name), value)
        for name, value in expected.items()
        if record.params.get(name) != value
    }
    if differ:
        detail = ", ".join(f"{n}={old!r} (settings: {new!r})" for n, (old, new) in differ.items())
        raise StaleIndexError(
            f"the {key} index was built with different settings: {detail}; "
            f"{hint} with the settings you want"
        )
    return record


# -- what an index must match -----------------------------------------------------------
def dense_key(embedder_name: str) -> str:
    return f"dense-{embedder_name}"


def bm25_params(settings: Settings) -> dict[str, Any]:
    """The BM25 parameters an index must match (``mmap`` is how it is loaded, not built)."""
    return settings.bm25.model_dump(exclude={"mmap"})


def dense_params(settings: Settings, embedder_name: str) -> dict[str, Any]:
    """The dense parameters an index must match (the dimension is recorded separately);
    a local model folder adds its weights' fingerprint, so retraining it makes the index
    stale rather than silently mismatched."""
    from sciera.artifacts.manifest import weights_id
    from sciera.embed.registry import with_home

    params: dict[str, Any] = {
        "embedder": embedder_name,
        "vectors": settings.vectors.backend,
        "qdrant_url": settings.vectors.qdrant_url if settings.vectors.backend == "qdrant" else None,
    }
    embed = with_home(settings.embed, settings.home)
    weights = weights_id(embed.model) if embed.model else None
    if weights is not None:
        params["weights"] = weights
    return params
