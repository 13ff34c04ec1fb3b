"""``load_pairs``: one entry point over a registry of loaders, every label one of the
project's verdict labels, every split one of train/dev/lockbox, unknown names one line."""

from __future__ import annotations

from pathlib import Path

import pytest

from sciera.datasets.pairs import FORMS, PAIR_LOADERS, SPLITS, LabelledPair, load_pairs
from sciera.errors import ScieraError
from sciera.types import VERDICT_LABELS

SHARED = Path(__file__).resolve().parents[4] / "shared" / "data"


def test_registry_names_the_shared_folders() -> None:
    assert set(PAIR_LOADERS) == {
        "healthver",
        "covidfact",
        "evidence_inference",
        "bioasq",
        "scifact",
    }
    assert all((SHARED / name).is_dir() for name in PAIR_LOADERS)


@pytest.mark.parametrize("source", ["healthver", "covidfact", "bioasq", "scifact"])
def test_every_record_is_well_formed(source: str) -> None:
    pairs = load_pairs(source, SHARED / source)
    assert pairs and all(isinstance(p, LabelledPair) for p in pairs)
    assert {p.label for p in pairs} <= set(VERDICT_LABELS)
    assert {p.split for p in pairs} <= set(SPLITS) and {p.form for p in pairs} <= set(FORMS)
    assert all(p.source == source and p.claim.strip() and p.evidence for p in pairs)
    assert len({p.id for p in pairs}) == len(pairs)
    assert pairs == load_pairs(source, SHARED / source)  # the same on every run


def test_unknown_names_are_one_line(tmp_path: Path) -> None:
    with pytest.raises(ScieraError, match="unknown collection 'fever'"):
        load_pairs("fever", tmp_path)
    with pytest.raises(ScieraError, match="unknown split 'test'"):
        load_pairs("healthver", tmp_path, split="test")
    with pytest.raises(ScieraError, match=r"healthver_dev\.csv: no such file"):
        load_pairs("healthver", tmp_path)
