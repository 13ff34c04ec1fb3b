"""Which folders sciera.embed.plain reads itself (model-free): only a plain transformer with
mean pooling and no prompts or lower-casing; anything else goes to sentence-transformers."""

from __future__ import annotations

import json

from sciera.embed.plain import MeanPooled, mean_pooled_config

_ST6 = {"embedding_dimension": 384, "pooling_mode": "mean", "include_prompt": True}
_ST2 = {
    "pooling_mode_cls_token": False,
    "pooling_mode_mean_tokens": True,
    "pooling_mode_max_tokens": False,
}


def _folder(tmp_path, pooling, *, modules=("Transformer", "Pooling", "Normalize"), **extra):
    paths = {"Transformer": "", "Pooling": "1_Pooling", "Normalize": "2_Normalize"}
    (tmp_path / "1_Pooling").mkdir(parents=True)
    (tmp_path / "1_Pooling" / "config.json").write_text(json.dumps(pooling))
    mods = [
        {"idx": i, "path": paths.get(m, m), "type": f"sentence_transformers.models.{m}"}
        for i, m in enumerate(modules)
    ]
    (tmp_path / "modules.json").write_text(json.dumps(mods))
    for name, content in extra.items():
        (tmp_path / f"{name}.json").write_text(json.dumps(content))
    return tmp_path


def test_plain_mean_pooled_folders_in_both_config_styles(tmp_path):
    assert mean_pooled_config(_folder(tmp_path / "a", _ST6)) == MeanPooled(None)
    bert = {"max_seq_length": 256, "do_lower_case": False}
    got = mean_pooled_config(_folder(tmp_path / "b", _ST2, sentence_bert_config=bert))
    assert got == MeanPooled(256)
    unnormalized = _folder(tmp_path / "c", _ST6, modules=("Transformer", "Pooling"))
    assert mean_pooled_config(unnormalized) == MeanPooled(None)


def test_anything_else_is_left_to_sentence_transformers(tmp_path):
    cls = dict(_ST2, pooling_mode_cls_token=True, pooling_mode_mean_tokens=False)
    assert mean_pooled_config(_folder(tmp_path / "cls", cls)) is None
    assert mean_pooled_config(_folder(tmp_path / "max", dict(_ST6, pooling_mode="max"))) is None
    lower = {"do_lower_case": True}
    assert mean_pooled_config(_folder(tmp_path / "low", _ST6, sentence_bert_config=lower)) is None
    prompts = {"prompts": {"query": "query: ", "document": ""}}
    folder = _folder(tmp_path / "e5", _ST6, config_sentence_transformers=prompts)
    assert mean_pooled_config(folder) is None
    dense = _folder(tmp_path / "dense", _ST6, modules=("Transformer", "Pooling", "Dense"))
    assert mean_pooled_config(dense) is None
    assert mean_pooled_config("sentence-transformers/all-MiniLM-L6-v2") is None
    assert mean_pooled_config(tmp_path / "missing") is None
