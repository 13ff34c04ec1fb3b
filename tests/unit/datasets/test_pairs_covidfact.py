"""COVID-Fact pairs on the real file: 4,086 claims (1,296 SUPPORTED / 2,790 REFUTED), folds by
``gold_source`` (a counter-claim shares its original's fold), stable, one-line errors."""

from __future__ import annotations

import json
from collections import Counter
from pathlib import Path

import pytest

from sciera.datasets.pairs import LabelledPair, load_pairs
from sciera.errors import InputError
from sciera.types import CONTRADICT, SUPPORT

DATA = Path(__file__).resolve().parents[4] / "shared" / "data" / "covidfact"


@pytest.fixture(scope="module")
def pairs() -> list[LabelledPair]:
    return load_pairs("covidfact", DATA)


def test_counts(pairs: list[LabelledPair]) -> None:
    assert Counter(p.label for p in pairs) == {SUPPORT: 1296, CONTRADICT: 2790}
    by_split = Counter(p.split for p in pairs)
    assert set(by_split) == {"train", "dev"}
    assert 0.1 < by_split["dev"] / len(pairs) < 0.3
    assert Counter((p.split, p.label) for p in pairs) == {
        ("train", SUPPORT): 1020,
        ("train", CONTRADICT): 2208,
        ("dev", SUPPORT): 276,
        ("dev", CONTRADICT): 582,
    }


def test_source_is_the_group(pairs: list[LabelledPair]) -> None:
    splits: dict[str, set[str]] = {}
    for p in pairs:
        splits.setdefault(p.group, set()).add(p.split)
    assert len(splits) == 1277
    assert all(len(s) == 1 for s in splits.values())
    lines = (DATA / "COVIDFACT_dataset.jsonl").read_text(encoding="utf-8").splitlines()
    first = json.loads(lines[0])
    assert pairs[0].group == f"source:{first['gold_source']}"
    assert pairs[0].evidence == tuple(first["evidence"])


def test_bad_label_is_one_line(tmp_path: Path) -> None:
    good = {"claim": "c", "label": "SUPPORTED", "evidence": ["e."], "gold_source": "s"}
    bad = dict(good, label="TRUE")
    (tmp_path / "COVIDFACT_dataset.jsonl").write_text(json.dumps(good) + "\n" + json.dumps(bad))
    with pytest.raises(InputError) as err:
        load_pairs("covidfact", tmp_path)
    assert str(err.value).endswith(":2: label: not SUPPORTED/REFUTED: 'TRUE'")
    assert "COVIDFACT_dataset.jsonl" in str(err.value)
