"""A training recipe's run (cross-encoder and embedder): its stages in order, each recorded
in the card of the model it wrote; a rerun skips the stages done; a changed stage runs
again with every stage after it. The stages' own work (training, soup, recalibration) is
replaced by stand-ins that write a card: what is tested is the run, not training (the e2e
tests train)."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from sciera.settings import load_settings
from sciera.train import cross_encoder_recipe as cer
from sciera.train import cross_encoder_run, recalibrate, soup
from sciera.train.cross_encoder_run import TrainResult
from sciera.train.recipe import load_recipe, recipe_record

RECIPE = """
out: {out}
data: {{corpus: c, queries: q, qrels: q/train.tsv, calibration_questions: 2}}
train: {{epochs: 1, max_length: 64}}
ingredients:
  - {{name: {a}, data: {{ssli_negatives: [s1]}}}}
  - {{name: {b}, train: {{seed: 1}}}}
soup: {{method: uniform}}
recalibrate:
  - {{precision: fp32, calibration_ssli: [cal/instances.jsonl]}}
  - {{precision: int8}}
"""


@pytest.fixture
def calls(monkeypatch: pytest.MonkeyPatch) -> list[tuple]:
    done: list[tuple] = []

    def written(out: str, what: dict) -> TrainResult:
        folder = Path(out)
        folder.mkdir(parents=True, exist_ok=True)
        card = {"name": folder.name, "kind": "cross-encoder reranker", **what}
        (folder / "sciera-card.json").write_text(json.dumps(card))
        return TrainResult(folder, card)

    def train(job, settings, progress, command):
        done.append(("train", job.out, job.config.seed, tuple(job.data.ssli_negatives)))
        return written(job.out, {"config": {"seed": job.config.seed}})

    def make_soup(job, settings, progress, command):
        done.append(("soup", job.out, job.models, job.method))
        return written(job.out, {"soup": {"chosen": list(job.models)}})

    def refit(model, settings, progress, command, job):
        done.append(("recalibrate", model, job.precision, job.calibration_ssli))
        card = json.loads((Path(model) / "sciera-card.json").read_text())
        return written(model, {**card, f"recalibrated_{job.precision}": True})

    monkeypatch.setattr(cross_encoder_run, "train_cross_encoder", train)
    monkeypatch.setattr(soup, "soup", make_soup)
    monkeypatch.setattr(recalibrate, "recalibrate", refit)
    monkeypatch.setattr(
        "sciera.artifacts.card.write_card",
        lambda folder, card: (Path(folder) / "sciera-card.json").write_text(json.dumps(card)),
    )
    monkeypatch.setattr("sciera.artifacts.manifest.write_manifest", lambda folder: {})
    return done


def _run(tmp_path: Path, *sets: str) -> list[TrainResult]:
    models = tmp_path / "models"
    path = tmp_path / "r.yaml"
    path.write_text(RECIPE.format(out=models / "soup", a=models / "a", b=models / "b"))
    recipe = load_recipe(cer.CrossEncoderRecipe, path, sets)
    settings = load_settings(home=str(tmp_path / "home"))
    return cer.train_recipe(recipe, recipe_record(path, sets), settings, say=lambda _: None)


def test_stages_run_in_order_then_a_rerun_skips_them(tmp_path: Path, calls, monkeypatch) -> None:
    monkeypatch.chdir(tmp_path)
    models = tmp_path / "models"
    results = _run(tmp_path)
    assert [c[0] for c in calls] == ["train", "train", "soup", "recalibrate", "recalibrate"]
    assert calls[0] == ("train", str(models / "a"), 0, ("s1",))  # its data over the recipe's
    assert calls[1] == ("train", str(models / "b"), 1, ())  # its seed over the recipe's
    assert calls[2] == (
        "soup",
        str(models / "soup"),
        (str(models / "a"), str(models / "b")),
        "uniform",
    )
    assert calls[3][2:] == ("fp32", ("cal/instances.jsonl",)) and calls[4][2:] == ("int8", None)
    assert len(results) == 5
    card = json.loads((models / "soup" / "sciera-card.json").read_text())
    assert card["recipe"]["stage"] == "recalibrate int8" and card["recipe"]["path"].endswith(
        "r.yaml"
    )
    assert card["recipe"]["content"]["soup"] == {"method": "uniform"}
    assert card["recalibrated_fp32"] and card["recalibrated_int8"]
    ingredient = json.loads((models / "a" / "sciera-card.json").read_text())
    assert ingredient["recipe"]["stage"] == f"train {models / 'a'}"
    assert (models / "soup.recipe.json").is_file()

    calls.clear()
    assert _run(tmp_path) == [] and calls == []  # all done with these settings

    # a changed soup runs again, and the recalibrations after it
    _run(tmp_path, "soup.method=greedy")
    assert [c[0] for c in calls] == ["soup", "recalibrate", "recalibrate"]
    calls.clear()
    _run(tmp_path, "soup.method=greedy", "recalibrate.1.calibration_ssli_weight=0")
    assert [c[0] for c in calls] == ["recalibrate"]


def test_a_recipe_without_ingredients_trains_out_alone(tmp_path: Path, calls, monkeypatch) -> None:
    monkeypatch.chdir(tmp_path)
    path = tmp_path / "one.yaml"
    path.write_text(f"out: {tmp_path / 'm'}\ndata: {{corpus: c, queries: q, qrels: r}}\n")
    recipe = load_recipe(cer.CrossEncoderRecipe, path)
    settings = load_settings(home=str(tmp_path / "home"))
    assert [s.name for s in cer.stages(recipe, settings)] == [f"train {tmp_path / 'm'}"]
    cer.train_recipe(recipe, recipe_record(path), settings, say=lambda _: None)
    assert calls == [("train", str(tmp_path / "m"), 0, ())]


@pytest.mark.parametrize(
    ("text", "error"),
    [
        ("soup: {method: uniform}", "soup: give it together with two or more ingredients"),
        ("ingredients: [{name: a}]\nsoup: {}", "ingredients: two or more"),
        ("ingredients: [{name: a}, {name: a}]\nsoup: {}", "ingredients: two or more"),
        (
            "ingredients: [{name: a, train: {epochs: 0}}, {name: b}]\nsoup: {}",
            "ingredients[0].train.epochs: Input should be greater than or equal to 1",
        ),
        ("recalibrate: [{precision: fp16}]", "recalibrate[0].precision: Input should be"),
    ],
)
def test_stages_that_do_not_fit_are_refused(tmp_path: Path, text: str, error: str) -> None:
    from sciera.errors import ScieraError

    path = tmp_path / "bad.yaml"
    path.write_text(f"out: m\ndata: {{corpus: c, queries: q, qrels: r}}\n{text}\n")
    with pytest.raises(ScieraError) as exc:
        load_recipe(cer.CrossEncoderRecipe, path)
    assert f"bad.yaml: {error}" in str(exc.value)


def test_the_embedder_recipe_is_one_logged_stage(tmp_path: Path, monkeypatch) -> None:
    from sciera.train import embedder_recipe, embedder_run

    monkeypatch.chdir(tmp_path)
    done: list[tuple] = []

    def train(job, settings, progress):
        done.append((job.out, job.config.epochs, job.config.time_budget_minutes, job.fp16))
        folder = Path(job.out)
        folder.mkdir(parents=True, exist_ok=True)
        return TrainResult(folder, {"name": folder.name})

    monkeypatch.setattr(embedder_run, "train_embedder", train)
    monkeypatch.setattr(
        "sciera.artifacts.card.write_card",
        lambda folder, card: (Path(folder) / "sciera-card.json").write_text(json.dumps(card)),
    )
    monkeypatch.setattr("sciera.artifacts.manifest.write_manifest", lambda folder: {})
    path = tmp_path / "e.yaml"
    path.write_text(
        f"out: {tmp_path / 'e'}\ndata: {{corpus: c, queries: q, qrels: r}}\n"
        "train: {epochs: 4, time_budget_minutes: 32}\n"
    )
    settings = load_settings(home=str(tmp_path / "home"))

    def run(*sets: str) -> list[TrainResult]:
        recipe = load_recipe(embedder_recipe.EmbedderRecipe, path, sets)
        return embedder_recipe.train_recipe(
            recipe, recipe_record(path, sets), settings, say=lambda _: None
        )

    assert len(run()) == 1 and done == [(str(tmp_path / "e"), 4, 32.0, True)]
    card = json.loads((tmp_path / "e" / "sciera-card.json").read_text())
    assert card["recipe"]["stage"] == "train" and card["recipe"]["set"] == []
    assert run() == [] and len(done) == 1
    run("train.fp16=false")
    assert done[-1] == (str(tmp_path / "e"), 4, 32.0, False)
