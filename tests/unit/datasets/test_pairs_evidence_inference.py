"""Evidence Inference 2.0 pairs on the real files: valid annotations per article split, three
claims each (the annotated direction SUPPORT, the other two CONTRADICT), the templates on real
rows, no article in two splits, the test articles the lockbox, one-line errors."""

from __future__ import annotations

import csv
from collections import Counter
from pathlib import Path

import pytest

from sciera.datasets.pairs import LabelledPair, ei_claims, load_pairs
from sciera.errors import InputError
from sciera.types import CONTRADICT, SUPPORT

DATA = Path(__file__).resolve().parents[4] / "shared" / "data" / "evidence_inference"
# valid annotations (Valid Label and Valid Reasoning true) per splits/ file: 4,473 of 4,876
VALID = {"train": 3582, "dev": 431, "lockbox": 460}


@pytest.fixture(scope="module")
def pairs() -> list[LabelledPair]:
    return load_pairs("evidence_inference", DATA)


def test_valid_annotations_per_split(pairs: list[LabelledPair]) -> None:
    supports = Counter(p.split for p in pairs if p.label == SUPPORT)
    assert supports == VALID  # one SUPPORT claim per valid annotation
    assert Counter(p.split for p in pairs) == {s: 3 * n for s, n in VALID.items()}
    assert len(load_pairs("evidence_inference", DATA, split="lockbox")) == 3 * 460


def test_both_polarities_of_each_claim_form(pairs: list[LabelledPair]) -> None:
    for verb in ("increases", "decreases"):
        labels = Counter(p.label for p in pairs if f" significantly {verb} " in p.claim)
        assert labels[SUPPORT] > 500 and labels[CONTRADICT] > 2000
    labels = Counter(p.label for p in pairs if p.claim.startswith("There is no significant"))
    assert labels == {SUPPORT: 2162, CONTRADICT: 4473 - 2162}


def test_templates_on_a_real_row(pairs: list[LabelledPair]) -> None:
    first = [p for p in pairs if p.group == "pmc:59610"][:3]
    assert [(p.claim, p.label) for p in first] == [
        (
            "LMWH significantly increases Recurrent venous thromboembolism compared with"
            " Unfractionated heparin.",
            CONTRADICT,
        ),
        (
            "LMWH significantly decreases Recurrent venous thromboembolism compared with"
            " Unfractionated heparin.",
            CONTRADICT,
        ),
        (
            "There is no significant difference between LMWH and Unfractionated heparin in"
            " Recurrent venous thromboembolism.",
            SUPPORT,
        ),
    ]
    assert first[0].evidence == (
        "Randomized studies have shown that LMWHs are as effective as unfractionated heparin"
        " in the prevention of recurrent venous thromboembolism",
    )
    assert first[0].rationale == (0,)


def test_span_is_the_rationale(pairs: list[LabelledPair]) -> None:
    assert all(p.rationale == tuple(range(len(p.evidence))) for p in pairs)
    assert all(p.evidence and all(s.strip() for s in p.evidence) for p in pairs)


def test_no_article_in_two_splits(pairs: list[LabelledPair]) -> None:
    splits: dict[str, set[str]] = {}
    for p in pairs:
        splits.setdefault(p.group, set()).add(p.split)
    assert all(len(s) == 1 for s in splits.values())
    lockbox = set((DATA / "splits" / "test_article_ids.txt").read_text().split())
    assert {g for g, s in splits.items() if s == {"lockbox"}} <= {f"pmc:{a}" for a in lockbox}


def test_direction_follows_the_label(pairs: list[LabelledPair]) -> None:
    with open(DATA / "v2_annotations.csv", encoding="utf-8", newline="") as fh:
        rows = [
            r
            for r in csv.DictReader(fh)
            if r["Valid Label"] == "True" and r["Valid Reasoning"] == "True"
        ]
    supported = [p.claim for p in pairs if p.label == SUPPORT]
    for row, claim in zip(rows, supported, strict=True):
        word = {"1": "increases", "-1": "decreases", "0": "no significant"}[row["Label Code"]]
        assert word in claim


def test_templates() -> None:
    claims = ei_claims("aspirin", "placebo", "pain")
    assert claims == {
        "increased": "aspirin significantly increases pain compared with placebo.",
        "decreased": "aspirin significantly decreases pain compared with placebo.",
        "no difference": "There is no significant difference between aspirin and placebo in pain.",
    }


def _collection(folder: Path, label: str) -> Path:
    (folder / "splits").mkdir(parents=True)
    (folder / "splits" / "train_article_ids.txt").write_text("7\n")
    (folder / "splits" / "validation_article_ids.txt").write_text("")
    (folder / "splits" / "test_article_ids.txt").write_text("")
    (folder / "prompts_merged.csv").write_text(
        "PromptID,PMCID,Outcome,Intervention,Comparator\n1,7,pain,aspirin,placebo\n"
    )
    (folder / "v2_annotations.csv").write_text(
        "UserID,PromptID,PMCID,Valid Label,Valid Reasoning,Label,Annotations\n"
        f"0,1,7,True,True,{label},Pain fell.\n"
    )
    return folder


def test_a_tmp_collection_and_a_bad_label(tmp_path: Path) -> None:
    good = load_pairs("evidence_inference", _collection(tmp_path / "a", "significantly decreased"))
    assert [p.label for p in good] == [CONTRADICT, SUPPORT, CONTRADICT]
    with pytest.raises(InputError) as err:
        load_pairs("evidence_inference", _collection(tmp_path / "b", "somewhat better"))
    message = str(err.value)
    assert "\n" not in message and "v2_annotations.csv" in message
    assert "prompt 1" in message and "Label: unknown label 'somewhat better'" in message
