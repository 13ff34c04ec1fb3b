"""Helpers of the `sciera train ...` end-to-end tests (fixtures in conftest.py)."""

from __future__ import annotations

import shutil
import subprocess
import sys
from pathlib import Path

import yaml

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


def train_args(kind: str, corpus: Path, base: Path, out: Path | str, *sets: str) -> list[str]:
    """`sciera train KIND RECIPE.yaml --set ...` on the small corpus: a recipe (written
    beside the corpus) with BM25 negatives from the top 10, the tiny model and the first
    N_QUERIES training claims; each of ``sets`` (``train.epochs=2``) a --set; a bare
    ``--overwrite`` passes through."""
    recipe = corpus.parent / "recipes" / f"{kind}-{Path(out).name}.yaml"
    recipe.parent.mkdir(parents=True, exist_ok=True)
    recipe.write_text(
        yaml.safe_dump(
            {
                "out": str(out),
                "data": {
                    "corpus": str(corpus),
                    "queries": str(SCIFACT),
                    "qrels": str(SCIFACT / "qrels" / "train.tsv"),
                    "retriever": "bm25",
                    "depth": 10,
                    "max_queries": N_QUERIES,
                },
                "train": {"base": str(base), "max_length": 64},
            }
        )
    )
    args = [sciera_exe(), "train", kind, str(recipe)]
    for item in sets:
        args += [item] if item.startswith("--") else ["--set", item]
    return args
