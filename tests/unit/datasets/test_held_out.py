"""``held_out_of``: a dataset cut to the questions a trained model's card records as held
out (a card in a temporary folder with a known split; the shipped verifier's card)."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from sciera.datasets import load_dataset
from sciera.datasets.held_out import held_out_ids, ids_from_card
from sciera.errors import ScieraError
from sciera.eval.experiment import parse_experiment

SHARED = Path(__file__).resolve().parents[4] / "shared" / "data"
SENTENCES = [
    {"doc_id": d, "title": f"T{d}", "abstract": [f"Sentence of {d}."], "structured": False}
    for d in (11, 12, 13)
]
CLAIMS = [
    {"id": i, "claim": f"Claim {i}.", "evidence": {}, "cited_doc_ids": [d]}
    for i, d in ((1, 11), (2, 12), (3, 13), (4, 11))
]


def scifact(folder: Path) -> Path:
    folder.mkdir(parents=True)
    (folder / "corpus_sentences.jsonl").write_text("".join(json.dumps(r) + "\n" for r in SENTENCES))
    (folder / "claims_train.jsonl").write_text("".join(json.dumps(r) + "\n" for r in CLAIMS))
    return folder


def model(folder: Path, data: dict) -> Path:
    """A model folder whose card records ``data`` (no manifest: a local folder)."""
    folder.mkdir(parents=True)
    (folder / "sciera-card.json").write_text(json.dumps({"name": "m", "data": data}))
    return folder


def test_the_cards_dev_claims_are_exactly_the_datasets_questions(tmp_path):
    folder = scifact(tmp_path / "scifact")
    m = model(tmp_path / "m", {"dev_ids": ["4", "2"], "test_ids": ["3"]})
    data = load_dataset("scifact", folder, held_out_of=str(m))
    assert sorted(data.queries) == ["2", "4"]
    assert sorted(data.claims) == ["2", "4"]
    fold = load_dataset("scifact", folder, held_out_of=str(m), held_out="cv_fold")
    assert list(fold.queries) == ["3"]


def test_limit_samples_within_the_held_out_questions(tmp_path):
    folder = scifact(tmp_path / "scifact")
    m = model(tmp_path / "m", {"dev_ids": ["1", "2", "4"]})
    data = load_dataset("scifact", folder, held_out_of=str(m), limit=2, seed=3)
    assert len(data.queries) == 2 and set(data.queries) <= {"1", "2", "4"}


def test_a_held_out_id_the_dataset_lacks_is_one_line_naming_it(tmp_path):
    folder = scifact(tmp_path / "scifact")
    m = model(tmp_path / "m", {"dev_ids": ["2", "99"]})
    with pytest.raises(ScieraError, match=r"1 of its 2 held-out questions .*'99'"):
        load_dataset("scifact", folder, held_out_of=str(m))


def test_a_card_without_the_split_says_which_field_is_missing(tmp_path):
    m = model(tmp_path / "m", {"dev_ids": ["1"], "test_ids": []})
    with pytest.raises(ScieraError, match="no test_ids"):
        held_out_ids(str(m), "scifact", "cv_fold")
    with pytest.raises(ScieraError, match="no pubmedqa_held_ids"):
        held_out_ids(str(m), "pubmedqa")
    with pytest.raises(ScieraError, match="not 'beir'"):
        ids_from_card({"data": {}}, "beir")


def test_the_experiment_schema_checks_the_pair_before_running(tmp_path):
    folder = scifact(tmp_path / "scifact")
    spec = {
        "name": "x",
        "dataset": {"type": "scifact", "path": str(folder), "held_out_of": "m"},
        "metrics": ["abstract_label_only_f1"],
        "pipelines": [{"name": "p", "retriever": "candidates"}],
    }
    assert parse_experiment(spec, "x.yaml").dataset.held_out_of == "m"
    bad = {**spec, "dataset": {**spec["dataset"], "held_out": "cv_fold", "type": "pubmedqa"}}
    bad["dataset"]["path"] = str(folder / "claims_train.jsonl")
    with pytest.raises(ScieraError, match=r"x.yaml: dataset: held_out: a pubmedqa .* dev"):
        parse_experiment(bad, "x.yaml")
    alone = {**spec, "dataset": {"type": "scifact", "path": str(folder), "held_out": "cv_fold"}}
    with pytest.raises(ScieraError, match="held_out: given without held_out_of"):
        parse_experiment(alone, "x.yaml")


@pytest.mark.skipif(not (SHARED / "scifact").is_dir(), reason="needs ../shared/data")
def test_the_shipped_verifiers_held_out_questions_are_its_cards():
    """The shipped card's 93 dev claims and 100 PubMedQA questions, as the benchmark
    scripts read them (``card["data"]["dev_ids"]``, ``pubmedqa_held_ids``)."""
    from sciera.artifacts.registry import VERIFIER, open_model

    card = open_model(VERIFIER, "scifact-verifier").card
    assert card is not None
    claims = load_dataset("scifact", SHARED / "scifact", held_out_of="scifact-verifier")
    assert sorted(claims.queries) == sorted(str(i) for i in card["data"]["dev_ids"])
    assert len(claims.queries) == 93
    pqa = load_dataset(
        "pubmedqa", SHARED / "pubmedqa" / "pqal_dev.json", held_out_of="scifact-verifier"
    )
    assert sorted(pqa.queries) == sorted(card["data"]["pubmedqa_held_ids"])
    assert len(pqa.queries) == 100
