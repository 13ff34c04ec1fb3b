"""An experiment's sub-corpus (``dataset.subcorpus``) on a tiny BEIR collection: the judged
documents are always in it, the same seed draws the same one, a BM25 pipeline returns only
its documents, the manifest records it and a resumed run refuses another."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from tiny_corpus import bm25_corpus

from sciera.datasets.loaders import load_dataset
from sciera.errors import ScieraError
from sciera.eval.experiment import parse_experiment
from sciera.eval.runner import run_experiment
from sciera.eval.runstore import prepare_results_dir
from sciera.eval.subcorpus import build_subcorpus, random_others
from sciera.settings import load_settings

DOCS = [
    ("a", "", "aspirin stroke aspirin stroke"),
    ("b", "", "aspirin stroke"),
    ("c", "", "aspirin"),
    ("d", "", "unrelated galaxies"),
    ("e", "", "galaxies and stars"),
    ("f", "", "stars"),
]


def collection(root: Path) -> Path:
    folder = root / "beir"
    (folder / "qrels").mkdir(parents=True)
    (folder / "queries.jsonl").write_text(json.dumps({"_id": "q1", "text": "aspirin stroke"}))
    (folder / "qrels" / "test.tsv").write_text("query-id\tcorpus-id\tscore\nq1\tc\t1\n")
    return folder


def spec(root: Path, subcorpus: dict) -> dict:
    return {
        "name": "unit",
        "dataset": {"type": "beir", "path": str(collection(root)), "subcorpus": subcorpus},
        "corpus": str(bm25_corpus(root, DOCS)),
        "metrics": ["hit@1"],
        "repeats": 1,
        "pipelines": [{"name": "bm25", "retriever": "bm25", "depth": 10}],
    }


@pytest.mark.parametrize(
    ("subcorpus", "error"),
    [
        ({"kind": "random"}, "dataset.subcorpus: others: required by kind random"),
        (
            {"kind": "bm25", "others": 3},
            "dataset.subcorpus: others: only kind random draws others; bm25 takes pool",
        ),
        ({"pool": 0}, "dataset.subcorpus.pool: Input should be greater than or equal to 1"),
        ({"size": 3}, "dataset.subcorpus.size: Extra inputs are not permitted"),
        ({"kind": "all"}, "dataset.subcorpus.kind: Input should be 'bm25' or 'random'"),
    ],
)
def test_a_bad_value_is_one_line_naming_the_field(tmp_path: Path, subcorpus, error) -> None:
    with pytest.raises(ScieraError) as exc:
        parse_experiment(spec(tmp_path, subcorpus), "x.yaml")
    assert str(exc.value) == f"x.yaml: {error}"


def test_a_subcorpus_needs_a_pipeline_that_searches_the_corpus(tmp_path: Path) -> None:
    data = spec(tmp_path, {"pool": 2})
    data["pipelines"] = [{"name": "pool", "retriever": "candidates"}]
    with pytest.raises(ScieraError) as exc:
        parse_experiment(data, "x.yaml")
    assert str(exc.value) == "x.yaml: dataset.subcorpus: no pipeline searches a corpus"


def test_the_same_seed_draws_the_same_others() -> None:
    ids = [f"d{i}" for i in range(50)]
    first = random_others({"d0"}, ids, 5, seed=3)
    assert first == random_others({"d0"}, ids, 5, seed=3)
    assert first != random_others({"d0"}, ids, 5, seed=4)
    assert len(first) == 5 and "d0" not in first
    assert random_others({"d0"}, ids, 99, seed=3) == set(ids) - {"d0"}  # fewer than asked


def test_judged_documents_are_always_in_it(tmp_path: Path) -> None:
    exp = parse_experiment(spec(tmp_path, {"kind": "random", "others": 2, "seed": 5}), "x")
    data = load_dataset("beir", exp.dataset.path, corpus=exp.corpus)
    settings = load_settings()
    for seed in range(6):
        sub_spec = exp.dataset.subcorpus.model_copy(update={"seed": seed})
        sub = build_subcorpus(sub_spec, data, exp.corpus, settings)
        assert "c" in sub.doc_ids and len(sub.doc_ids) == 3
    # kind bm25 (the default): the judged "c" plus the question's top BM25 document "a"
    pooled = parse_experiment(spec(tmp_path / "p", {"pool": 1}), "x").dataset.subcorpus
    sub = build_subcorpus(pooled, data, exp.corpus, settings)
    assert sub.doc_ids == {"a", "c"} and sub.record()["kind"] == "bm25"


def test_a_run_searches_only_the_subcorpus_and_records_it(tmp_path: Path) -> None:
    exp = parse_experiment(spec(tmp_path, {"kind": "random", "others": 1, "seed": 0}), "x")
    run_experiment(exp, tmp_path / "out")
    rec = json.loads((tmp_path / "out/runs/bm25/r0/results.jsonl").read_text())
    data = load_dataset("beir", exp.dataset.path, corpus=exp.corpus)
    sub = build_subcorpus(exp.dataset.subcorpus, data, exp.corpus, load_settings())
    returned = {d for d, _ in rec["first"]}
    assert "c" in returned and returned <= sub.doc_ids  # 2 documents, "c" first or not
    manifest = json.loads((tmp_path / "out/manifest.json").read_text())
    assert manifest["subcorpus"] == sub.record()
    assert manifest["subcorpus"]["size"] == 2 and manifest["subcorpus"]["seed"] == 0
    run_experiment(exp, tmp_path / "out")  # the same sub-corpus resumes
    other = {**sub.record(), "ids": "0" * 64}
    with pytest.raises(ScieraError, match=r"dataset\.subcorpus: its results searched 2 documents"):
        prepare_results_dir(tmp_path / "out", exp, data, {"bm25": 1}, subcorpus=other)
    with pytest.raises(ScieraError, match="this run the whole corpus"):
        prepare_results_dir(tmp_path / "out", exp, data, {"bm25": 1})
