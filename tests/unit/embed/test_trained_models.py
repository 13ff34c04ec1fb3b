"""Trained embedders by name: bare names resolve under SCIERA_HOME/models, and a model's
weights fingerprint keys cached vectors and built indexes (a retrained model is not mixed
with vectors of the old one)."""

from __future__ import annotations

import os
from pathlib import Path

from sciera.artifacts.manifest import weights_id
from sciera.embed.cache import embedder_identity
from sciera.embed.registry import resolve_model, with_home
from sciera.retrieve.manifest import dense_params
from sciera.settings import EmbedSettings, Settings


def _model(root: Path, payload: bytes) -> Path:
    root.mkdir(parents=True, exist_ok=True)
    (root / "config.json").write_text("{}")
    (root / "model.safetensors").write_bytes(payload)
    return root


def test_bare_names_resolve_under_home_models(tmp_path):
    model = _model(tmp_path / "models" / "my-embed", b"abc")
    assert resolve_model("my-embed", tmp_path) == str(model)
    assert resolve_model("other", tmp_path) == "other"  # a hub name, left alone
    assert resolve_model("org/name", tmp_path) == "org/name"
    assert resolve_model("my-embed", None) == "my-embed"
    st = EmbedSettings(backend="sentence-transformers", model="my-embed")
    assert with_home(st, tmp_path).model == str(model)
    mini = EmbedSettings(backend="minilm", model="my-embed")
    assert with_home(mini, tmp_path) is mini  # other backends take no model


def test_weights_id_follows_the_weight_files(tmp_path):
    model = _model(tmp_path / "m", b"first")
    first = weights_id(str(model))
    assert first is not None and weights_id(str(model)) == first
    (model / "model.safetensors").write_bytes(b"second")
    os.utime(model / "model.safetensors", ns=(1, 1))  # a new mtime, whatever the clock
    assert weights_id(str(model)) not in (None, first)
    assert weights_id("sentence-transformers/all-MiniLM-L6-v2") is None
    assert weights_id(str(_model(tmp_path / "empty", b"x").parent / "nothing")) is None


def test_dense_index_params_and_cache_identity_carry_the_weights(tmp_path):
    model = _model(tmp_path / "models" / "my-embed", b"weights")
    settings = Settings(
        home=tmp_path, embed=EmbedSettings(backend="sentence-transformers", model="my-embed")
    )
    params = dense_params(settings, "st-my-embed")
    assert params["weights"] == weights_id(str(model))
    assert "weights" not in dense_params(Settings(home=tmp_path), "minilm")

    class Stub:
        name, dim, weights = "st-my-embed", 4, "abc123"

    class Plain:
        name, dim = "minilm", 4

    assert embedder_identity(Stub()).endswith(":abc123")
    assert not embedder_identity(Plain()).endswith(":abc123")
