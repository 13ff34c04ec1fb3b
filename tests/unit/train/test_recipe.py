"""The recipe loader every `sciera train KIND RECIPE.yaml` shares: unknown keys refused,
`--set` overrides validated like the file, relative paths read from the YAML's folder,
one-line errors naming the file and the field; the stage log a rerun resumes from."""

from __future__ import annotations

from pathlib import Path

import pytest
from pydantic import Field

from sciera.errors import ScieraError
from sciera.train.recipe import Recipe, StageLog, load_recipe, settings_key


class Part(Recipe):
    epochs: int = 1
    sets: tuple[Path, ...] = ()


class Whole(Recipe):
    out: str
    corpus: Path
    part: Part = Part()
    parts: list[Part] = Field(default_factory=list)


@pytest.fixture
def recipe(tmp_path: Path) -> Path:
    path = tmp_path / "recipes" / "r.yaml"
    path.parent.mkdir()
    path.write_text("out: m\ncorpus: ../corpora/c\npart: {sets: [s1]}\nparts: [{epochs: 2}]\n")
    return path


def test_paths_are_read_from_the_yaml_folder_and_sets_override(recipe: Path) -> None:
    r = load_recipe(Whole, recipe, ["part.epochs=3", "parts.0.epochs=5", "out=other"])
    assert r.corpus == recipe.parent.parent / "corpora" / "c"
    assert r.part == Part(epochs=3, sets=(recipe.parent / "s1",))
    assert r.parts == [Part(epochs=5)] and r.out == "other"
    assert load_recipe(Whole, recipe, ["part.sets=[a, /b]"]).part.sets == (
        recipe.parent / "a",
        Path("/b"),
    )


@pytest.mark.parametrize(
    ("sets", "error"),
    [
        ((), None),
        (("part.epochs=many",), "r.yaml: part.epochs: Input should be a valid integer"),
        (("nope=1",), "r.yaml: nope: Extra inputs are not permitted"),
        (("part.nope=1",), "r.yaml: part.nope: Extra inputs are not permitted"),
        (("parts.4.epochs=1",), "r.yaml: --set parts.4.epochs=1: no item 4 in that list"),
        (("part",), "r.yaml: --set part: expected key.path=value"),
        (("out.x=1",), "r.yaml: out: Input should be a valid string"),
    ],
)
def test_errors_are_one_line_naming_file_and_field(recipe: Path, sets, error) -> None:
    if error is None:
        assert load_recipe(Whole, recipe, sets).part.epochs == 1
        return
    with pytest.raises(ScieraError) as exc:
        load_recipe(Whole, recipe, sets)
    assert str(exc.value).startswith(str(recipe)) and error in str(exc.value)
    assert "\n" not in str(exc.value)


def test_unreadable_and_malformed_files(tmp_path: Path) -> None:
    with pytest.raises(ScieraError, match="cannot read"):
        load_recipe(Whole, tmp_path / "missing.yaml")
    bad = tmp_path / "bad.yaml"
    bad.write_text("out: [\n")
    with pytest.raises(ScieraError, match=r"bad\.yaml: not valid YAML"):
        load_recipe(Whole, bad)
    bad.write_text("- a\n")
    with pytest.raises(ScieraError, match="expected a mapping"):
        load_recipe(Whole, bad)


def test_stage_log_skips_done_stages_and_reruns_from_a_changed_one(tmp_path: Path) -> None:
    path = tmp_path / "stages.json"
    log = StageLog(path)
    assert not log.done("train", "k1")
    log.record("train", "k1")
    log.record("soup", "k2")
    log.record("recalibrate", "k3")
    again = StageLog(path)
    assert again.done("train", "k1")
    assert not again.done("soup", "changed")
    again.record("soup", "changed")  # the stages after it are dropped
    last = StageLog(path)
    assert last.done("train", "k1") and last.done("soup", "changed")
    assert not last.done("recalibrate", "k3")
    assert settings_key({"a": 1, "b": [2]}) == settings_key({"b": [2], "a": 1})
    assert settings_key(Part(epochs=1)) != settings_key(Part(epochs=2))
