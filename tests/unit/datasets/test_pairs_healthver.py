"""HealthVer pairs on the real files (../shared/data/healthver): counts by split and label as
the data README gives them, dev file as train and test file as dev, one-line errors."""

from __future__ import annotations

from collections import Counter
from pathlib import Path

import pytest

from sciera.datasets.pairs import LabelledPair, load_pairs
from sciera.errors import InputError
from sciera.types import CONTRADICT, NOT_ENOUGH_INFO, SUPPORT

DATA = Path(__file__).resolve().parents[4] / "shared" / "data" / "healthver"


@pytest.fixture(scope="module")
def pairs() -> list[LabelledPair]:
    return load_pairs("healthver", DATA)


def test_counts_by_split_and_label(pairs: list[LabelledPair]) -> None:
    counts = Counter((p.split, p.label) for p in pairs)
    assert counts == {
        ("train", SUPPORT): 533,
        ("train", CONTRADICT): 391,
        ("train", NOT_ENOUGH_INFO): 993,
        ("dev", SUPPORT): 671,
        ("dev", CONTRADICT): 425,
        ("dev", NOT_ENOUGH_INFO): 727,
    }
    assert len(load_pairs("healthver", DATA, split="dev")) == 1823
    assert load_pairs("healthver", DATA, split="lockbox") == []


def test_records(pairs: list[LabelledPair]) -> None:
    first = pairs[0]
    assert first.id == "224" and first.claim == "The CORONAVIRUS is not of natural origin"
    assert first.evidence == ("Covid19 infection began in Wuhan (Hubei, China) in December, 2019.",)
    assert (first.label, first.source, first.form, first.split) == (
        NOT_ENOUGH_INFO,
        "healthver",
        "claim",
        "train",
    )
    assert all(p.evidence and all(s.strip() for s in p.evidence) for p in pairs)
    assert max(len(p.evidence) for p in pairs) > 1  # passages are split into sentences


def test_no_group_in_two_splits(pairs: list[LabelledPair]) -> None:
    splits: dict[str, set[str]] = {}
    for p in pairs:
        splits.setdefault(p.group, set()).add(p.split)
    assert all(len(s) == 1 for s in splits.values())


def test_bad_label_is_one_line(tmp_path: Path) -> None:
    header = "id,evidence,claim,label,topic_ip,question\n"
    (tmp_path / "healthver_dev.csv").write_text(header + '7,"Some evidence.",A claim,Maybe,1,q\n')
    (tmp_path / "healthver_test.csv").write_text(header)
    with pytest.raises(InputError) as err:
        load_pairs("healthver", tmp_path)
    message = str(err.value)
    assert "\n" not in message
    assert "healthver_dev.csv" in message and "id 7" in message and "label" in message
