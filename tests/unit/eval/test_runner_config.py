"""Experiment YAML validation: one line naming the file and the field; dataset loaders."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

import pytest
import yaml

from sciera.datasets import load_dataset
from sciera.errors import ScieraError
from sciera.eval.experiment import load_experiment

BASE = {
    "name": "cfg",
    "dataset": {"type": "pubmedqa", "path": "data.json"},
    "metrics": ["hit@1", "mrr@10"],
    "pipelines": [
        {"name": "pool", "retriever": "candidates"},
        {"name": "rr", "retriever": "candidates", "reranker": "llm_pointwise"},
    ],
}
PUBMEDQA = {
    "111": {
        "QUESTION": "Does A help?",
        "CONTEXTS": ["A helps B.", "C is D."],
        "LONG_ANSWER": "A helps.",
        "final_decision": "yes",
    },
    "222": {"QUESTION": "Is E safe?", "CONTEXTS": ["E harms."], "final_decision": "no"},
}


def write(tmp_path: Path, spec: dict) -> Path:
    (tmp_path / "data.json").write_text(json.dumps(PUBMEDQA))
    path = tmp_path / "exp.yaml"
    path.write_text(yaml.safe_dump(spec))
    return path


def error_of(tmp_path: Path, spec: dict) -> str:
    with pytest.raises(ScieraError) as exc:
        load_experiment(write(tmp_path, spec))
    return str(exc.value)


def with_pipeline(i: int, **changes) -> dict:
    spec = json.loads(json.dumps(BASE))
    spec["pipelines"][i].update(changes)
    return spec


def test_valid_file_resolves_paths_relative_to_it(tmp_path: Path) -> None:
    exp = load_experiment(write(tmp_path, BASE))
    assert exp.dataset.path == tmp_path.resolve() / "data.json"
    assert [exp.repeats_of(p) for p in exp.pipelines] == [1, 3]
    assert exp.seed_of(2) == 2


def test_label_and_exact_answer_metrics_validate(tmp_path: Path) -> None:
    exp = load_experiment(write(tmp_path, {**BASE, "metrics": ["Macro_F1", "yesno_accuracy"]}))
    assert exp.metrics == ["macro_f1", "yesno_accuracy"]


@pytest.mark.parametrize(
    ("spec", "expected"),
    [
        (
            with_pipeline(1, reranker="foo"),
            "exp.yaml: pipelines[1].reranker: unknown reranker 'foo' (choose from ",
        ),
        (
            {**BASE, "metrics": ["hit@1", "ndgc@10"]},
            "exp.yaml: metrics[1]: unknown metric 'ndgc@10'",
        ),
        (
            {**BASE, "metrics": ["macro_f1", "macro_f2"]},
            "exp.yaml: metrics[1]: unknown metric 'macro_f2'",
        ),
        (
            {**BASE, "dataset": {"type": "pubmedqa", "path": "missing.json"}},
            "exp.yaml: dataset.path: no such file or folder",
        ),
        (
            {**BASE, "dataset": {"type": "msmarco", "path": "data.json"}},
            "exp.yaml: dataset.type: unknown dataset type 'msmarco' (choose from beir, ",
        ),
        (with_pipeline(0, rerankr="x"), "exp.yaml: pipelines[0].rerankr: Extra inputs"),
        (
            with_pipeline(0, retriever="bm25"),
            "exp.yaml: corpus: required by pipelines[0].retriever 'bm25'",
        ),
        (with_pipeline(0, name="a b"), "exp.yaml: pipelines[0].name: 'a b' must be one word"),
        ({**BASE, "repeats": 3, "seeds": [1]}, "exp.yaml: experiment: seeds: 1 seeds for 3"),
        ({**BASE, "judges": [{"name": "vibes"}]}, "exp.yaml: judges[0].name: unknown judge"),
    ],
)
def test_errors_name_the_field(tmp_path: Path, spec: dict, expected: str) -> None:
    message = error_of(tmp_path, spec)
    assert message.startswith(str(tmp_path / "exp.yaml") + expected.removeprefix("exp.yaml"))
    assert "\n" not in message


def test_unavailable_or_unknown_answer_stages_are_reported(tmp_path: Path) -> None:
    message = error_of(tmp_path, with_pipeline(0, generator="nonexistent"))
    assert "pipelines[0].generator: " in message
    assert "unavailable" in message or "unknown generator 'nonexistent'" in message


def test_cli_exits_nonzero_with_one_line(tmp_path: Path) -> None:
    path = write(tmp_path, with_pipeline(1, reranker="foo"))
    exe = Path(sys.executable).parent / "sciera"
    proc = subprocess.run([str(exe), "eval", "run", str(path)], capture_output=True, text=True)
    assert proc.returncode == 2
    lines = proc.stderr.strip().splitlines()
    assert len(lines) == 1 and "pipelines[1].reranker: unknown reranker 'foo'" in lines[0]


def test_pubmedqa_loader_and_seeded_subset(tmp_path: Path) -> None:
    write(tmp_path, BASE)
    data = load_dataset("pubmedqa", tmp_path / "data.json")
    assert data.unit == "passage"
    assert [p.passage_id for p in data.candidates["111"]] == ["111#0", "111#1"]
    assert data.qrels["111"] == {"111#0": 1, "111#1": 1}
    assert data.answers["111"] == ("yes", "A helps.") and data.answers["222"] == ("no",)
    assert data.labels == {"111": "yes", "222": "no"}
    one = load_dataset("pubmedqa", tmp_path / "data.json", limit=1, seed=3)
    again = load_dataset("pubmedqa", tmp_path / "data.json", limit=1, seed=3)
    assert len(one.queries) == 1 and one.qids == again.qids
    assert list(one.labels) == one.qids  # subsets keep the labels of their questions


def test_a_passage_dataset_judged_per_document(tmp_path: Path) -> None:
    """PubMedQA over an ingested corpus: its contexts are not the corpus's chunks, so the
    judgments move to the abstract (``unit: document`` in an experiment)."""
    spec = {**BASE, "dataset": {**BASE["dataset"], "unit": "document", "limit": 1, "seed": 3}}
    exp = load_experiment(write(tmp_path, spec))
    ds = exp.dataset
    data = load_dataset(ds.type, ds.path, **ds.loader_options())
    passages = load_dataset("pubmedqa", tmp_path / "data.json", limit=1, seed=3)
    assert data.unit == "document" and data.qids == passages.qids
    [qid] = data.qids
    assert data.qrels == {qid: {qid: 1}} and data.labels == passages.labels
    assert data.candidates == passages.candidates  # pools stay; rankings map by Max-P
    assert data.input_key(qid) != passages.input_key(qid)  # a rerun does not reuse
    assert data.at_documents() is data
    assert "unit" in error_of(tmp_path, {**spec, "dataset": {**spec["dataset"], "unit": "doc"}})


def test_beir_loader_keeps_judged_queries(scifact_dir: Path) -> None:
    data = load_dataset("beir", scifact_dir, split="test", limit=50, seed=13)
    assert data.unit == "document" and len(data.queries) == 50
    assert all(q in data.qrels for q in data.queries)
    assert load_dataset("beir", scifact_dir, split="test").qids.__len__() == 300
