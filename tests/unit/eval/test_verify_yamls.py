"""The verification experiments in benchmarks/experiments/ load (schema, dataset paths, the
held-out split they name) and their header gives the command that runs them."""

from __future__ import annotations

from pathlib import Path

import pytest
import yaml

from sciera.eval.experiment import parse_experiment

EXPERIMENTS = Path(__file__).resolve().parents[3] / "benchmarks" / "experiments"
NAMES = ["verify_scifact.yaml", "verify_pubmedqa.yaml", "verify_pubmedqa_retrieval.yaml"]


@pytest.mark.parametrize("name", NAMES)
def test_each_verification_experiment_loads(name: str, tmp_path: Path) -> None:
    file = EXPERIMENTS / name
    text = file.read_text(encoding="utf-8")
    assert f"sciera eval run benchmarks/experiments/{name} --out " in text
    assert "sciera eval report " in text and "--baseline " in text
    data = yaml.safe_load(text)
    if not (EXPERIMENTS / data["dataset"]["path"]).exists():
        pytest.skip(f"needs {data['dataset']['path']} (the shared data)")
    if "corpus" in data:  # an ingested corpus, not in a fresh clone
        data["corpus"] = str(tmp_path)
    exp = parse_experiment(data, name, EXPERIMENTS)
    assert exp.name == file.stem
    assert exp.dataset.held_out_of == "scifact-verifier"
    assert all(p.verify is not None or p.generator == "llm" for p in exp.pipelines)
