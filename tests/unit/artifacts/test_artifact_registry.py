"""Model names resolve in one order (shipped, trained under SCIERA_HOME/models, a path, a
hub name as given); open_model checks a folder and reads its card; cards are written
atomically and read back byte for byte."""

from __future__ import annotations

import pytest

from sciera.artifacts.card import read_card, write_card
from sciera.artifacts.files import CARD_FILE, MANIFEST_FILE
from sciera.artifacts.manifest import write_manifest
from sciera.artifacts.registry import (
    CROSS_ENCODER,
    EMBEDDER,
    SHIPPED,
    open_model,
    resolve,
    trained_dir,
)
from sciera.errors import ScieraError


def _trained(home, name):
    folder = home / "models" / name
    folder.mkdir(parents=True)
    (folder / "config.json").write_text("{}")
    return folder


def test_names_resolve_shipped_then_trained_then_as_given(tmp_path):
    mine = _trained(tmp_path, "mine")
    shipped = SHIPPED[CROSS_ENCODER]["scifact-minilm"]
    assert resolve(CROSS_ENCODER, "scifact-minilm", tmp_path) == str(shipped)
    assert (
        resolve(CROSS_ENCODER, "mine", tmp_path) == str(mine) == str(trained_dir("mine", tmp_path))
    )
    assert resolve(CROSS_ENCODER, "org/hub-name", tmp_path) == "org/hub-name"
    assert resolve(CROSS_ENCODER, "mine", None) == "mine"
    assert trained_dir("org/name", tmp_path) is None
    with pytest.raises(ScieraError, match="unknown model kind"):
        resolve("tokenizer", "x")


def test_open_model_checks_the_folder_and_reads_its_card(tmp_path):
    folder = _trained(tmp_path, "mine")
    unchecked = open_model(EMBEDDER, "mine", tmp_path)
    assert unchecked.card is None and "not hash-checked" in unchecked.check
    (folder / CARD_FILE).write_text('{"name": "mine", "kind": "test"}\n')
    write_manifest(folder)
    opened = open_model(EMBEDDER, "mine", tmp_path)
    assert opened.card == {"name": "mine", "kind": "test"}
    assert opened.check.startswith("verified") and not opened.shipped
    (folder / "config.json").write_text('{"changed": true}')
    with pytest.raises(ScieraError, match=r"config\.json has"):
        open_model(EMBEDDER, "mine", tmp_path)
    hub = open_model(EMBEDDER, "org/hub-name", tmp_path)
    assert hub.path == "org/hub-name" and hub.card is None


def test_shipped_models_open_verified_with_their_cards():
    for kind, models in SHIPPED.items():
        for name in models:
            opened = open_model(kind, name)
            assert opened.shipped and opened.check.startswith("verified")
            assert opened.card is not None and opened.card["name"]
            assert (SHIPPED[kind][name] / MANIFEST_FILE).is_file()


def test_the_shipped_cross_encoder_card_writes_back_byte_for_byte(tmp_path):
    folder = SHIPPED[CROSS_ENCODER]["scifact-minilm"]
    write_card(tmp_path, read_card(folder))
    for name in (CARD_FILE, "README.md"):  # the README is the card's rendering
        assert (tmp_path / name).read_bytes() == (folder / name).read_bytes()
    assert sorted(p.name for p in tmp_path.iterdir()) == ["README.md", CARD_FILE]
    assert read_card(tmp_path / "none") is None
