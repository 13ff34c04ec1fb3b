"""Helpers of the `sciera train ...` end-to-end tests (fixtures in conftest.py)."""

from __future__ import annotations

import shutil
import subprocess
import sys
from pathlib import Path

REPO = Path(__file__).resolve().parents[2]
SCIFACT = REPO / ".." / "shared" / "data" / "scifact"
SHIPPED_SSLI = REPO / "benchmarks/results/ssli_scifact_100/build/instances.packed.jsonl.gz"
N_QUERIES = 40


def sciera_exe() -> str:
    return shutil.which("sciera") or str(Path(sys.executable).parent / "sciera")


def run_sciera(*args: str, env: dict | None = None) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [sciera_exe(), *args], capture_output=True, text=True, timeout=900, env=env
    )


def train_args(kind: str, corpus: Path, base: Path, out: Path, *extra: str) -> list[str]:
    """`sciera train KIND` on the small corpus: BM25 negatives from the top 10, the tiny
    model, the first N_QUERIES training claims."""
    return [
        sciera_exe(),
        "train",
        kind,
        "--corpus",
        str(corpus),
        "--queries",
        str(SCIFACT),
        "--qrels",
        str(SCIFACT / "qrels" / "train.tsv"),
        "--retriever",
        "bm25",
        "--depth",
        "10",
        "--base",
        str(base),
        "--max-length",
        "64",
        "--max-queries",
        str(N_QUERIES),
        "--out",
        str(out),
        *extra,
    ]
