"""Each shipped model's recipe loads and maps to exactly the configuration its card records:
`sciera train KIND recipes/X.yaml` is the one command that rebuilds it."""

from __future__ import annotations

import json
import shlex
from dataclasses import asdict
from pathlib import Path

import pytest
import yaml

from sciera.settings import load_settings
from sciera.train.ce_fit import TrainConfig
from sciera.train.cross_encoder_recipe import CrossEncoderRecipe, stages
from sciera.train.embedder_fit import EmbedderConfig
from sciera.train.embedder_recipe import EmbedderRecipe
from sciera.train.recipe import load_recipe

ROOT = Path(__file__).resolve().parents[3]
CE_RECIPE = "recipes/scifact-minilm-cross-encoder.yaml"
EMBED_RECIPE = "recipes/scifact-minilm-embedder.yaml"


def _card(kind: str) -> dict:
    return json.loads(
        (ROOT / f"src/sciera/{kind}/models/scifact-minilm/sciera-card.json").read_text()
    )


def _flags(command: str) -> dict[str, list[str]]:
    """The options of a recorded `sciera train cross-encoder --x y ...` command."""
    tokens = shlex.split(command.split("  # ", 1)[0])[3:]
    out: dict[str, list[str]] = {}
    for flag, value in zip(tokens[::2], tokens[1::2], strict=True):
        out.setdefault(flag, []).append(value)
    return out


@pytest.fixture(autouse=True)
def _at_root(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.chdir(ROOT)  # the cards record paths as typed from the repository root


def _check_record(card: dict, path: str, kind: str) -> None:
    assert card["command"] == f"sciera train {kind} {path}"
    assert card["recipe"]["path"] == path and card["recipe"]["set"] == []
    assert card["recipe"]["content"] == yaml.safe_load((ROOT / path).read_text())


def test_cross_encoder_recipe_is_the_shipped_cards_configuration() -> None:
    card = _card("rerank")
    recipe = load_recipe(CrossEncoderRecipe, ROOT / CE_RECIPE)
    _check_record(card, CE_RECIPE, "cross-encoder")
    assert recipe.out == card["name"]
    # the soup: its method, its ingredients in order, all chosen
    assert recipe.soup is not None and recipe.soup.method == card["soup"]["method"] == "uniform"
    names = [i["name"] for i in card["soup"]["ingredients"]]
    assert [i.name for i in recipe.ingredients] == names == card["soup"]["chosen"]
    # each ingredient: the options of the command that trained it, nothing else
    for (name, train, data), ing in zip(recipe.runs(), card["soup"]["ingredients"], strict=True):
        flags = _flags(ing["command"])
        assert flags.pop("--out") == [name]
        assert flags.pop("--base") == ["$BASE"] and "git archive 9d7b49f" in ing["command"]
        assert train.base.endswith("/src/sciera/rerank/models/scifact-minilm")
        assert "9d7b49f" in ing["continued_from"]["what"]
        expected = TrainConfig(
            base=train.base,
            epochs=int(flags.pop("--epochs")[0]),
            max_length=int(flags.pop("--max-length")[0]),
        )
        assert train.config() == expected and train.fp16
        spec = data.spec(train.seed)
        assert [spec.corpus, spec.queries, spec.qrels] == [
            *flags.pop("--corpus"),
            *flags.pop("--queries"),
            *flags.pop("--qrels"),
        ]
        assert list(spec.exclude_ssli) == flags.pop("--exclude-ssli")
        assert list(spec.ssli_negatives) == flags.pop("--ssli-negatives")
        assert [p["path"] for p in ing["ssli_negatives"] if "path" in p] == list(
            spec.ssli_negatives
        )
        assert spec.calibration_questions == int(flags.pop("--calibration-questions")[0])
        styles = flags.pop("--calibration-styles", ["question"])[0].split(",")
        assert list(spec.calibration_styles) == styles
        assert not flags, f"{name}: options the recipe does not map: {flags}"
        defaults = {"retriever": "hybrid", "depth": 30, "dev_fraction": 0.12, "max_queries": None}
        assert {k: getattr(spec, k) for k in defaults} == defaults
        assert (spec.synthetic, spec.spliced_negatives, spec.exclude_qrels) == (0, 0, ())
    # the soup's data and calibration: the card's
    spec = recipe.data.spec(recipe.train.seed)
    assert [spec.corpus, spec.queries, spec.qrels] == [
        card["data"][k] for k in ("corpus", "queries", "qrels")
    ]
    assert list(spec.exclude_ssli) == [
        e["path"] for e in card["splits"]["excluded"] if e["kind"] == "ssli"
    ]
    config = card["config"]
    for key in ("retriever", "depth", "dev_fraction", "seed", "calibration_questions"):
        assert getattr(spec, key) == config[key], key
    assert list(spec.calibration_styles) == config["calibration_styles"]
    assert recipe.train.max_length == config["max_length"] == card["max_length"]
    # the recalibrations: fp32 with the calibration-side SSLI set, then int8 as the card says
    fp32, int8 = recipe.recalibrate
    assert fp32.precision == "fp32" and int8.precision == "int8"
    sets = [str(p.relative_to(ROOT)) for p in fp32.calibration_ssli or ()]
    assert (
        sets
        == card["recalibrated"]["calibration_ssli"]["sets"]
        == config["calibration_ssli"]["sets"]
    )
    assert card["recalibrated_int8"]["calibration_ssli"]["sets"] == sets
    assert int8.calibration_ssli is None and fp32.calibration_ssli_weight is None
    assert config["calibration_ssli"]["weight"] == 10  # calibration_ssli.DEFAULT_WEIGHT
    assert all(
        r.calibration_questions is None and r.calibration_styles is None and r.embedder is None
        for r in recipe.recalibrate
    )


def test_cross_encoder_recipe_stages_in_order(tmp_path: Path) -> None:
    recipe = load_recipe(CrossEncoderRecipe, ROOT / CE_RECIPE)
    settings = load_settings(home=str(tmp_path))
    assert [s.name for s in stages(recipe, settings)] == [
        "train ce-ssli3-full",
        "train ce-ssli2-full",
        "soup",
        "recalibrate fp32",
        "recalibrate int8",
    ]
    assert _card("rerank")["recipe"]["stage"] == "recalibrate int8"


def test_embedder_recipe_is_the_shipped_cards_configuration() -> None:
    card = _card("embed")
    recipe = load_recipe(EmbedderRecipe, ROOT / EMBED_RECIPE)
    _check_record(card, EMBED_RECIPE, "embedder")
    assert recipe.out == card["name"]
    config = card["config"]
    assert asdict(recipe.train.config()) == {k: config[k] for k in asdict(EmbedderConfig())}
    spec = recipe.data.spec(recipe.train.seed)
    assert [spec.corpus, spec.queries, spec.qrels] == [
        card["data"][k] for k in ("corpus", "queries", "qrels")
    ]
    for key in ("retriever", "depth", "dev_fraction"):
        assert getattr(spec, key) == config[key], key
    assert list(spec.exclude_ssli) == [
        e["path"] for e in card["splits"]["excluded"] if e["kind"] == "ssli"
    ]
    assert (spec.synthetic, spec.ssli_negatives, spec.spliced_negatives) == (0, (), 0)
    assert spec.calibration_questions == 0 and spec.max_queries is None
