"""The citer's recipe: an ensemble's members and the work folders they train in, the files a
model folder ships them as (model-free)."""

from __future__ import annotations

import pytest

from sciera.train.citer_fit import (
    MEMBER_HARD_NEGATIVES,
    MEMBER_RANDOM_NEGATIVES,
    CiterConfig,
    FittedCiter,
)
from sciera.train.loop import TrainState


def test_an_ensembles_first_member_is_the_single_citer_and_reuses_its_folder():
    one, two = CiterConfig(), CiterConfig(members=2)
    assert two.member(0) == one and two.member(0).key() == one.key() == two.key()
    # the key the work folders of the shipped recipe are named by (a change retrains them)
    assert one.key() == "8437197f1d27"
    other = two.member(1)
    assert (other.hard_negatives, other.random_negatives) == (
        MEMBER_HARD_NEGATIVES,
        MEMBER_RANDOM_NEGATIVES,
    )
    assert other.seed == one.seed + 1 and other.members == 1 and other.rank == one.rank
    assert other.key() != one.key()
    assert CiterConfig(seed=5, members=3).member(2).seed == 7
    with pytest.raises(ValueError, match="member 2 of a 2-member citer"):
        two.member(2)
    with pytest.raises(ValueError, match="at least 1"):
        CiterConfig(members=0)


def test_a_fitted_ensemble_names_ships_and_reports_every_member(tmp_path):
    def fitted(name: str, cfg: CiterConfig) -> FittedCiter:
        folder = tmp_path / name
        folder.mkdir()
        (folder / "citer.safetensors").write_bytes(name.encode())
        return FittedCiter(folder / "citer.safetensors", TrainState(), 10, cfg)

    cfg = CiterConfig(members=2)
    single = fitted("a", cfg.member(0))
    pair = FittedCiter(
        single.adapters, single.state, 10, cfg, members=(fitted("b", cfg.member(1)),)
    )
    assert single.section("sciera-citer.safetensors")["adapters"] == "sciera-citer.safetensors"
    assert pair.section("sciera-citer.safetensors")["adapters"] == [
        "sciera-citer.safetensors",
        "sciera-citer-2.safetensors",
    ]
    out = tmp_path / "model"
    out.mkdir()
    pair.copy_to(out, "sciera-citer.safetensors")
    assert (out / "sciera-citer.safetensors").read_bytes() == b"a"
    assert (out / "sciera-citer-2.safetensors").read_bytes() == b"b"
    report = pair.report()
    assert report["config"]["members"] == 2
    assert [m["config"]["hard_negatives"] for m in report["members"]] == [MEMBER_HARD_NEGATIVES]
    assert "members" not in single.report()
    assert pair.paths() == [
        tmp_path / "a" / "citer.safetensors",
        tmp_path / "b" / "citer.safetensors",
    ]


def test_each_members_training_progress_is_named():
    from sciera.train.citer_fit import _member_progress

    seen = []
    _member_progress(lambda *a: seen.append(a), 1, 2)("epoch 1/3", 4, 10)
    assert seen == [("citer 2/2: epoch 1/3", 4, 10)]

    def quiet(*a):
        return None

    assert _member_progress(quiet, 0, 1) is quiet and _member_progress(None, 0, 2) is None
