"""HealthVer, COVID-Fact and Evidence Inference as experiment datasets: one question per
labelled pair, its evidence sentences the one document the verifier reads, SUPPORT /
CONTRADICT / NOT ENOUGH INFO as yes / no / maybe, and the pair loader's splits."""

from __future__ import annotations

from collections import Counter
from pathlib import Path

import pytest

from sciera.datasets.loaders import EvalDataset, load_dataset
from sciera.datasets.pair_eval import (
    load_covidfact,
    load_evidence_inference,
    load_healthver,
    pairs_dataset,
)
from sciera.datasets.pairs import LabelledPair, load_pairs
from sciera.errors import InputError, ScieraError
from sciera.eval.experiment import load_experiment
from sciera.types import CONTRADICT, NOT_ENOUGH_INFO, SUPPORT

EXPERIMENT = Path(__file__).resolve().parents[3] / "benchmarks/experiments/verify_healthver.yaml"
LOADERS = {
    "healthver": load_healthver,
    "covidfact": load_covidfact,
    "evidence_inference": load_evidence_inference,
}
COUNTS = {  # split -> (pairs, yes, no, maybe), the table in docs/verify.md
    ("healthver", "train"): (1917, 533, 391, 993),
    ("healthver", "dev"): (1823, 671, 425, 727),
    ("covidfact", "train"): (3228, 1020, 2208, 0),
    ("covidfact", "dev"): (858, 276, 582, 0),
    ("evidence_inference", "dev"): (1293, 431, 862, 0),
    ("evidence_inference", "lockbox"): (1380, 460, 920, 0),
}


@pytest.fixture(scope="module")
def loaded(shared_data: Path) -> dict[tuple[str, str], tuple[EvalDataset, list[LabelledPair]]]:
    return {
        (source, split): (
            LOADERS[source](shared_data / source, split=split),
            load_pairs(source, shared_data / source, split=split),
        )
        for source, split in COUNTS
    }


@pytest.mark.parametrize(("source", "split"), sorted(COUNTS))
def test_one_question_per_pair_of_the_split(source: str, split: str, loaded: dict) -> None:
    data, pairs = loaded[source, split]
    assert list(data.queries) == [p.id for p in pairs]
    labels = Counter(data.labels.values())
    assert (len(pairs), labels["yes"], labels["no"], labels["maybe"]) == COUNTS[source, split]
    assert set(data.question_types.values()) == {"yesno"}
    assert data.yesno_answers == (
        ("yes", "no", "maybe") if source == "healthver" else ("yes", "no")
    )


@pytest.mark.parametrize(("source", "split"), sorted(COUNTS))
def test_each_pair_is_its_claim_its_evidence_and_its_label(
    source: str, split: str, loaded: dict
) -> None:
    data, pairs = loaded[source, split]
    answer = {SUPPORT: "yes", CONTRADICT: "no", NOT_ENOUGH_INFO: "maybe"}
    for p in pairs:
        assert data.queries[p.id] == p.claim
        assert data.labels[p.id] == answer[p.label] == data.answers[p.id][0]
        assert data.sentences[p.id] == {p.id: ("", p.evidence)}
        (passage,) = data.candidates[p.id]
        assert (passage.passage_id, passage.doc_id) == (f"{p.id}#0", p.id)
        assert passage.text == " ".join(p.evidence)
        assert data.qrels[p.id] == {f"{p.id}#0": 1}


def test_no_split_loads_every_pair(shared_data: Path, loaded: dict) -> None:
    everything = load_covidfact(shared_data / "covidfact")
    train, dev = loaded["covidfact", "train"][0], loaded["covidfact", "dev"][0]
    assert set(everything.queries) == set(train.queries) | set(dev.queries)
    assert len(everything.queries) == 3228 + 858


def test_load_dataset_draws_a_seeded_subset(shared_data: Path, loaded: dict) -> None:
    path = shared_data / "healthver"
    data = load_dataset("healthver", path, split="dev", limit=20, seed=1)
    dev = loaded["healthver", "dev"][0]
    assert len(data.queries) == 20 and set(data.queries) <= set(dev.queries)
    assert set(data.labels) == set(data.sentences) == set(data.candidates) == set(data.queries)
    assert data.qids == load_dataset("healthver", path, split="dev", limit=20, seed=1).qids
    assert data.qids != load_dataset("healthver", path, split="dev", limit=20, seed=2).qids


@pytest.mark.parametrize(
    ("source", "split", "known"),
    [
        ("healthver", "test", "train or dev"),
        ("healthver", "lockbox", "train or dev"),
        ("evidence_inference", "test", "train or dev or lockbox"),
    ],
)
def test_an_unknown_split_is_one_line_naming_file_and_field(
    shared_data: Path, source: str, split: str, known: str
) -> None:
    path = shared_data / source
    with pytest.raises(InputError) as err:
        load_dataset(source, path, split=split)
    assert err.value.field == "split" and err.value.path == str(path)
    assert "\n" not in str(err.value) and f"{split!r} is not {known}" in str(err.value)


def _pair(pid: str, label: str) -> LabelledPair:
    return LabelledPair(pid, "Masks reduce spread.", ("One.", "Two."), label, "x", pid, "dev")


def test_a_label_the_collection_cannot_answer_or_a_repeated_id_is_an_error() -> None:
    yesno = ("yes", "no")
    assert pairs_dataset("x", [_pair("a", SUPPORT), _pair("b", CONTRADICT)], yesno).labels == {
        "a": "yes",
        "b": "no",
    }
    with pytest.raises(ScieraError, match="pair b: label: 'NOT ENOUGH INFO'"):
        pairs_dataset("x", [_pair("a", SUPPORT), _pair("b", NOT_ENOUGH_INFO)], yesno)
    with pytest.raises(ScieraError, match="pair a: id: the id appears more than once"):
        pairs_dataset("x", [_pair("a", SUPPORT), _pair("a", CONTRADICT)], yesno)


def test_the_experiment_file_names_the_dev_split() -> None:
    exp = load_experiment(EXPERIMENT)
    assert (exp.dataset.type, exp.dataset.split, exp.dataset.limit) == ("healthver", "dev", 150)
    assert [p.name for p in exp.pipelines] == ["trained", "combined"]
    assert exp.metrics == ["yesno_accuracy", "macro_f1"]
