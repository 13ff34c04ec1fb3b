"""Pack results folders so they fit in the repository, and unpack what a tool wants plain
(``sciera eval pack`` / ``sciera eval unpack``).

Packing a folder (run it on a results folder before committing it; new runs write plain
files and are never packed by the tools that write them; a file given by name is gzipped):

- each results directory of ``sciera eval run`` in it (a folder with ``manifest.json``):
  ``dataset.json`` and every ``runs/<pipeline>/r<i>/results.jsonl`` are gzipped, and the
  files the runner derives from that log (``run.trec``, ``first_stage.trec``,
  ``answers.jsonl``, ``traces.jsonl``) are removed once they are checked to be written
  back byte for byte by unpacking (any that would not be is gzipped instead);
- every other ``*.jsonl`` and ``*.trec`` (per-query rows, judge logs) is gzipped, except an
  SSLI build's ``extract.jsonl`` and ``qa.jsonl`` (the build's own resume logs);
- with ``png``, every PNG is re-encoded losslessly by ``optipng -o2`` when it is installed
  (``apt-get install optipng``), else by Pillow's optimizing encoder (level 9); the pixels
  are checked equal before a file is replaced, and a file is replaced only when the new one
  is smaller.

Summaries (``manifest.json``, ``report/``, JSON reports, Markdown, CSV) stay plain. Gzip
output is deterministic (level 9, no name, mtime 0): packing an unchanged file again gives
the same bytes, and packing a packed folder changes nothing. Every reader in sciera takes
the plain name and reads ``name.gz`` when only that is there (:mod:`sciera.eval.resultlog`);
a run resumed on a packed folder writes the log back plain first and goes on appending to it.

Unpacking writes the derived run files of each results directory back from its logs (for
tools outside sciera that want ``run.trec``, e.g. trec_eval); the logs stay packed.
"""

from __future__ import annotations

import shutil
import subprocess
import tempfile
from pathlib import Path

from sciera.errors import ScieraError
from sciera.eval.resultlog import pack
from sciera.eval.runstore import pack_results_dir, restore_outputs

PACKED_SUFFIXES = (".jsonl", ".trec")
KEEP_PLAIN = ("extract.jsonl", "qa.jsonl")  # an SSLI build resumes from them (`dataset build`)


def results_dirs(root: Path) -> list[Path]:
    """The ``sciera eval run`` results directories in ``root`` (itself included)."""
    return sorted(m.parent for m in root.rglob("manifest.json") if (m.parent / "runs").is_dir())


def pack_folder(root: Path) -> tuple[list[Path], list[Path]]:
    """Pack ``root`` as the module says; returns (files written, files removed)."""
    written: list[Path] = []
    removed: list[Path] = []
    for folder in results_dirs(root):
        done = pack_results_dir(folder)
        written += done["packed"]
        removed += done["removed"]
    for path in sorted(root.rglob("*")):
        if path.is_file() and path.suffix in PACKED_SUFFIXES and path.name not in KEEP_PLAIN:
            written.append(pack(path))
    return written, removed


def unpack_folder(root: Path) -> list[Path]:
    """Write the derived run files of every results directory in ``root`` back from its
    logs; returns the files written."""
    return [p for d in results_dirs(root) for p in restore_outputs(d)]


def optimize_png(path: Path, encoder: str | None = None) -> int:
    """Re-encode ``path`` losslessly if that is smaller and shows the same pixels; returns the
    bytes saved. ``encoder`` is ``"optipng"`` or ``"pillow"``; by default optipng when it is
    on the PATH, else Pillow."""
    from PIL import Image

    encoder = encoder or ("optipng" if shutil.which("optipng") else "pillow")
    with tempfile.TemporaryDirectory() as tmp:
        out = Path(tmp) / path.name
        if encoder == "optipng":
            subprocess.run(["optipng", "-quiet", "-o2", "-out", str(out), str(path)], check=True)
        else:
            with Image.open(path) as img:
                img.save(out, format="PNG", optimize=True, compress_level=9)
        if not out.is_file() or out.stat().st_size >= path.stat().st_size:
            return 0
        with Image.open(path) as a, Image.open(out) as b:
            if a.size != b.size or a.convert("RGBA").tobytes() != b.convert("RGBA").tobytes():
                raise ScieraError(f"{path}: {encoder} changed the pixels; left as it was")
        saved = path.stat().st_size - out.stat().st_size
        shutil.copyfile(out, path)
        return saved
