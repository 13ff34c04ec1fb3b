"""The verifier recipe: the shipped model's recipe file maps to exactly the configuration its
card records, the recipe's sections mirror the config dataclasses, ``--set`` and one-line
errors, and the stages a rerun skips (stand-in stages, no model)."""

from __future__ import annotations

import json
import os
from dataclasses import MISSING, asdict, fields
from pathlib import Path

import pytest
import yaml

from sciera.errors import ScieraError
from sciera.train import verifier_run
from sciera.train.verifier_job import run_key
from sciera.train.verifier_recipe import (
    SECTIONS,
    VerifierRecipe,
    dataclass_fields,
    load_verifier_recipe,
)

REPO = Path(__file__).resolve().parents[3]
RECIPE = "recipes/scifact-verifier.yaml"
SHIPPED = REPO / "src/sciera/verify/models/scifact-verifier"


@pytest.fixture
def shipped(monkeypatch):
    """The shipped recipe (read from the repository root, as its card's paths are) and card."""
    monkeypatch.chdir(REPO)
    card = json.loads((SHIPPED / "sciera-card.json").read_text(encoding="utf-8"))
    return load_verifier_recipe(RECIPE), card


def test_the_shipped_recipe_is_the_shipped_models_configuration(shipped):
    recipe, card = shipped
    job = recipe.job()
    assert run_key(job) == card["run_key"]  # the hyperparameters and the whole data spec
    assert {
        **asdict(job.config),
        "fp16": job.fp16,
        "open_k": job.open_k,
        "verdict_bias": job.verdict_bias,
    } == card["config"]
    data = card["data"]
    assert (str(job.data.claims), str(job.data.sentences)) == (data["claims"], data["sentences"])
    assert (
        str(job.data.corpus) == data["corpus"]
        and str(job.data.pubmedqa) == (data["pubmedqa"]["path"])
    )
    assert [str(p) for p in job.data.ssli_negatives] == [s["path"] for s in data["ssli_negatives"]]
    ssli = [e["path"] for e in card["splits"]["excluded"] if e["kind"] == "ssli"]
    assert [str(p) for p in job.data.exclude_ssli] == ssli
    assert job.min_relevance == card["policy"]["min_relevance"]
    assert job.citer is not None
    assert asdict(job.citer) == card["citer"]["training"]["config"]
    assert job.combine_llm and job.per_label == card["combiner"]["per_label"]
    assert job.negated_claim == (
        "trained+llm+llm_negated" in card["combiner"]["claim"]["input_search"]
    )
    assert set(card["calibrators"]) == {"rationale", "verdict"}


def test_the_shipped_card_records_its_recipe(shipped):
    recipe, card = shipped
    assert card["command"] == f"sciera train verifier {RECIPE}"
    assert card["recipe"]["path"] == RECIPE and card["recipe"]["set"] == []
    assert card["recipe"]["content"] == yaml.safe_load((REPO / RECIPE).read_text())
    assert VerifierRecipe.model_validate(card["recipe"]["content"]).model_dump() == (
        VerifierRecipe.model_validate(yaml.safe_load((REPO / RECIPE).read_text())).model_dump()
    )
    readme = (SHIPPED / "README.md").read_text(encoding="utf-8")
    assert f"the recipe `{RECIPE}`" in readme and "--out" not in readme
    # the stages run in the order the shipped model was built: fit, then calibrate with the
    # LLM combiners (its 'recalibrated' entry), then the citer added with the rest kept,
    # then the question decider
    run = verifier_run.Run(recipe.job(), None, SHIPPED, SHIPPED, None, {})  # type: ignore[arg-type]
    names = [s.name for s in verifier_run.stages(run)]
    assert names == ["fit", "calibrate", "combine", "citer", "decide"]
    assert card["recalibrated"]["date"] < card["citer_added"]["date"]
    assert card["decider"]["per_label"] == recipe.decider.per_label
    assert card["decider"]["bioasq"] == str(recipe.job().decider.bioasq)


@pytest.mark.parametrize("section", sorted(SECTIONS))
def test_each_section_mirrors_its_config_dataclass(section):
    model, cls, elsewhere = SECTIONS[section]
    mine = set(model.model_fields) - {"fp16"}  # fp16: how the weights are saved
    assert mine == dataclass_fields(cls) - elsewhere
    for f in fields(cls):
        if f.name in mine and f.default is not MISSING:
            default = model.model_fields[f.name].default
            assert default == f.default or tuple(default) == f.default, f.name


def _recipe(tmp_path: Path, text: str = "") -> Path:
    (tmp_path / "in").mkdir()
    for name in ("c.jsonl", "s.jsonl"):
        (tmp_path / "in" / name).write_text("")
    path = tmp_path / "r.yaml"
    path.write_text(f"out: m\ndata: {{claims: in/c.jsonl, sentences: in/s.jsonl}}\n{text}")
    return path


def test_paths_are_read_from_the_recipes_folder_and_given_from_the_current_one(
    tmp_path, monkeypatch
):
    path = _recipe(tmp_path)
    monkeypatch.chdir(tmp_path / "in")
    job = load_verifier_recipe(path).job()
    assert job.data.claims == Path("c.jsonl") and job.data.sentences == Path("s.jsonl")
    assert job.citer is None and not job.combine_llm  # sections left out do not run


def test_set_overrides_a_field_and_is_validated_alike(tmp_path):
    path = _recipe(tmp_path, "model: {epochs: 2}\n")
    assert load_verifier_recipe(path).job().config.epochs == 2
    job = load_verifier_recipe(
        path, ["model.epochs=1", "citer.rank=4", "combiner.negated_claim=true", "seed=3"]
    ).job()
    assert job.config.epochs == 1 and job.citer is not None and job.citer.rank == 4
    assert job.negated_claim and job.per_label == 100
    assert job.config.seed == job.data.seed == job.citer.seed == 3
    pooled = load_verifier_recipe(path, ["combiner.pooled={healthver: in}"]).job()
    assert pooled.combiner_pooled == ((("healthver", Path(os.path.relpath(tmp_path / "in")))),)
    for sets, message in (
        (["model.epochs=0"], f"{path}: model.epochs: Input should be greater than or equal to 1"),
        (["model.context=words"], f"{path}: model.context: Input should be 'none', 'title'"),
        (["model.lr_body=1"], f"{path}: model.lr_body: Extra inputs are not permitted"),
        (["data.cv_fold=7"], f"{path}: data: cv_fold must be in [0, 5), got 7"),
        (["epochs"], f"{path}: --set epochs: expected key.path=value"),
        (
            ["combiner.pooled={fever: in}"],
            f"{path}: combiner.pooled: unknown collection 'fever' (one of",
        ),
        (["combiner.own_claims=false"], f"{path}: combiner.own_claims: false needs combiner"),
    ):
        with pytest.raises(ScieraError) as err:
            load_verifier_recipe(path, sets)
        assert str(err.value).startswith(message) and "\n" not in str(err.value)


def test_a_rerun_skips_the_stages_done_and_reruns_a_changed_one(tmp_path, monkeypatch):
    """Stand-in stages record their runs; the stage log decides which run."""
    from sciera.settings import Settings

    ran: list[tuple[str, bool]] = []

    def stage(name):
        def run(r):
            section = {
                "combine": r.job.combine_llm,
                "citer": r.job.citer is not None,
                "decider": r.job.decider is not None,
            }
            ran.append((name, section.get(name, True)))
            r.model_dir.mkdir(parents=True, exist_ok=True)
            card = {**r.head, "heads": {}, "run_key": run_key(r.job)}
            (r.model_dir / "sciera-card.json").write_text(json.dumps(card))

        return run

    for name in ("fit", "calibrate", "combine", "citer", "decider"):
        monkeypatch.setattr(verifier_run, f"{name}_stage", stage(name))
    monkeypatch.setattr(verifier_run, "prepare_verifier", lambda *a, **k: None)
    path = _recipe(tmp_path, "combiner: {}\n")
    path.write_text(path.read_text().replace("out: m", f"out: {tmp_path / 'm'}"))
    settings = Settings(home=str(tmp_path))

    def train(*sets: str) -> list[tuple[str, bool]]:
        ran.clear()
        recipe = load_verifier_recipe(path, sets)
        verifier_run.train_verifier(recipe.job(), settings, command="c", recipe={"path": "r"})
        return list(ran)

    first = [
        ("fit", True),
        ("calibrate", True),
        ("combine", True),
        ("citer", False),
        ("decider", False),
    ]
    assert train() == first
    assert train() == []  # all done: nothing runs
    assert train("model.time_budget_minutes=5") == []  # not what the weights depend on
    assert train("calibrate.open_k=3") == first[1:]  # the weights kept
    kept = ("calibrate.open_k=3", "citer.rank=2")
    assert train(*kept) == [("citer", True), ("decider", False)]  # the rest kept
    assert train(*kept, "decider.bioasq=in/c.jsonl") == [("decider", True)]  # added last
    # pooled collections change the combine stage (and what follows); none keeps it
    assert train(*kept, "combiner.pooled={healthver: in}") == [
        ("combine", True),
        ("citer", True),
        ("decider", False),
    ]
    back = train(*kept, "combiner.pooled={}")
    assert back == [("combine", True), ("citer", True), ("decider", False)]
    assert train(*kept, "combiner=null") == [
        ("combine", False),  # takes the combiners out of the folder
        ("citer", True),
        ("decider", False),
    ]
    with pytest.raises(ScieraError, match="reads the combined verdict: add a combiner"):
        train(*kept, "combiner=null", "decider.bioasq=in/c.jsonl")
    with pytest.raises(ScieraError, match="other model or data settings; pass --overwrite"):
        train("model.epochs=1")  # other weights: refused


def test_the_training_page_lists_every_field_with_its_default():
    """docs/train.md's verifier recipe block: every field of the model, at its default."""
    text = (REPO / "docs/train.md").read_text(encoding="utf-8")
    section = text[text.index("## Train the claim verifier") :]
    block = section[
        section.index("```yaml\n") + 8 : section.index("```\n", section.index("```yaml"))
    ]
    shown = yaml.safe_load(block)

    def check(model, values, where):
        assert set(values) == set(model.model_fields), where
        for name, info in model.model_fields.items():
            sub = info.annotation
            nested = getattr(sub, "__args__", (sub,))[0]
            if isinstance(values[name], dict) and hasattr(nested, "model_fields"):
                check(nested, values[name], f"{where}{name}.")
            elif info.is_required():
                assert values[name] is not None, f"{where}{name}"
            else:
                default = info.default
                default = list(default) if isinstance(default, tuple) else default
                assert values[name] == default, f"{where}{name}"

    VerifierRecipe.model_validate(shown)
    check(VerifierRecipe, shown, "")


def test_a_later_stage_takes_the_fit_entries_from_the_card_when_the_work_file_is_gone(tmp_path):
    """A model fitted before the fit stage kept its file (or a work folder emptied) still
    recalibrates; a folder of other heads stops before any work with a one-line error."""
    from sciera.train import verifier_stages

    job = load_verifier_recipe(_recipe(tmp_path)).job()
    model_dir, work = tmp_path / "m", tmp_path / "m.work"
    model_dir.mkdir()
    work.mkdir()
    run = verifier_stages.Run(job, None, model_dir, work, None, {})  # type: ignore[arg-type]
    card = {"run_key": run_key(job), "best_epoch": 2, "epochs": [], "other": 1}
    (model_dir / "sciera-card.json").write_text(json.dumps(card))
    assert verifier_stages.fit_entries(run) == {
        "run_key": run_key(job),
        "best_epoch": 2,
        "epochs": [],
    }
    (work / verifier_stages.FIT_FILE).write_text(json.dumps({"run_key": "x"}))
    assert verifier_stages.fit_entries(run) == {"run_key": "x"}  # the work file first
    (work / verifier_stages.FIT_FILE).unlink()
    (model_dir / "sciera-card.json").write_text(json.dumps({**card, "run_key": "other"}))
    with pytest.raises(ScieraError, match=r"fit\.json: missing, and .* delete .*m\.recipe\.json"):
        verifier_stages.fit_entries(run)
