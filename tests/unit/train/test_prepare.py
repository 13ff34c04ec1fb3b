"""The work folder of a training run: epochs resume only into the same, unfinished run."""

from __future__ import annotations

import json

import pytest

from sciera.errors import ScieraError
from sciera.settings import Settings
from sciera.train.prepare import DataSpec, model_dir_for, open_work, run_key

SPEC = DataSpec("corpus", "queries.jsonl", "qrels/train.tsv")


def _state(work):
    (work / "checkpoint").mkdir()
    (work / "state.json").write_text("{}")
    (work / "mined.jsonl").write_text("cached\n")


def test_names_go_under_home_and_paths_stay(tmp_path):
    settings = Settings(home=tmp_path)
    assert model_dir_for("my-model", settings) == tmp_path / "models" / "my-model"
    assert model_dir_for("./here/m", settings).as_posix() == "here/m"


def test_run_key_ignores_the_time_budget_only():
    base = run_key({"epochs": 3, "time_budget_minutes": 10}, SPEC)
    assert run_key({"epochs": 3, "time_budget_minutes": 60}, SPEC) == base
    assert run_key({"epochs": 4, "time_budget_minutes": 10}, SPEC) != base
    other = DataSpec("corpus", "queries.jsonl", "qrels/train.tsv", max_queries=5)
    assert run_key({"epochs": 3}, other) != run_key({"epochs": 3}, SPEC)


def test_same_unfinished_run_resumes(tmp_path):
    settings = Settings(home=tmp_path)
    _, work = open_work("m", settings, False, "k1")
    _state(work)
    _, again = open_work("m", settings, False, "k1")
    assert (again / "checkpoint").is_dir() and (again / "state.json").exists()


def test_changed_config_or_finished_run_trains_anew_keeping_mined_negatives(tmp_path):
    settings = Settings(home=tmp_path)
    _, work = open_work("m", settings, False, "k1")
    _state(work)
    open_work("m", settings, False, "k2")
    assert not (work / "checkpoint").exists() and not (work / "state.json").exists()
    assert (work / "mined.jsonl").read_text() == "cached\n"
    assert json.loads((work / "run.json").read_text()) == {"key": "k2"}
    _state(work)
    (work / "card.json").write_text("{}")  # the run finished
    (tmp_path / "models" / "m").mkdir()
    with pytest.raises(ScieraError, match="--overwrite"):
        open_work("m", settings, False, "k2")
    open_work("m", settings, True, "k2")
    assert not (work / "state.json").exists() and not (work / "card.json").exists()


def test_default_score_mode_prefers_fused_unless_the_logit_wins_clearly():
    from sciera.artifacts.card import default_score_mode

    def modes(ce, fused):
        return {"ce": {"ndcg@10": ce}, "fused": {"ndcg@10": fused}}

    assert default_score_mode(modes(0.736, 0.735)) == "fused"  # the shipped model's dev
    assert default_score_mode(modes(0.70, 0.72)) == "fused"
    assert default_score_mode(modes(0.75, 0.735)) == "ce"
