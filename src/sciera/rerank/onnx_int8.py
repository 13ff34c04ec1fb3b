"""Int8 cross-encoder inference through ONNX Runtime: the CPU fast path.

The model is exported once from its own weights (``torch.onnx.export``), its MatMul/Gemm
weights quantized per output channel to int8 (``onnxruntime.quantization.quantize_dynamic``,
activations quantized per batch), and the result cached under
``SCIERA_HOME/cache/onnx/<fingerprint>/`` (the fingerprint covers the weights file and the
exporter versions, so retrained weights get a new export). The write is atomic: a crash
leaves no half-written model behind. Tokenization is the CrossEncoder's own (same
truncation), and pairs are batched longest first, as sentence-transformers does.

Per-channel int8 moves the logits slightly (a model's calibrators should be refitted on
them: ``sciera train recalibrate NAME --precision int8``); per-tensor int8, as torch's
dynamic quantization does, moved them much further on the shipped model.
"""

from __future__ import annotations

import hashlib
import logging
import os
import tempfile
import warnings
from collections.abc import Sequence
from pathlib import Path
from typing import Any

import numpy as np

from sciera.errors import require

log = logging.getLogger(__name__)

ONNX_FILE = "model_int8.onnx"
_INPUTS = ("input_ids", "attention_mask", "token_type_ids")
# x86 flags of the instructions ONNX Runtime's int8 matmuls pay off with (AVX-512 words,
# VNNI dot products, AMX); with AVX2 alone its int8 kernels lose to fp32 torch
INT8_FAST_FLAGS = frozenset({"avx512bw", "avx512_vnni", "avx_vnni", "amx_int8"})
_X86 = frozenset({"x86_64", "amd64", "i386", "i686", "x86"})


def int8_is_faster(cpuinfo: str | None = None, machine: str | None = None) -> bool:
    """Whether int8 inference should beat fp32 on this CPU. Measured on the shipped
    cross-encoder (30 candidates): int8 about 1.9x faster on an AVX-512 CPU, 1.7x SLOWER
    on an AVX2-only AMD EPYC (1.47 vs 0.87 s). An x86 CPU whose flags
    (``/proc/cpuinfo``) show none of :data:`INT8_FAST_FLAGS` gets False; any other CPU,
    or flags that cannot be read, True."""
    import platform

    if (machine or platform.machine()).lower() not in _X86:
        return True
    if cpuinfo is None:
        try:
            cpuinfo = Path("/proc/cpuinfo").read_text(errors="replace")
        except OSError:
            return True
    for line in cpuinfo.splitlines():
        key, _, value = line.partition(":")
        if key.strip() == "flags":
            return bool(INT8_FAST_FLAGS & set(value.split()))
    return True


def fingerprint(model_dir: str | Path) -> str:
    """Hash of the weights file(s) and of the exporter versions."""
    import onnxruntime
    import torch

    h = hashlib.sha256(f"{torch.__version__}|{onnxruntime.__version__}|int8-pc".encode())
    files = sorted(Path(model_dir).glob("*.safetensors")) or sorted(Path(model_dir).glob("*.bin"))
    for f in files:
        with f.open("rb") as fh:
            for block in iter(lambda: fh.read(1 << 22), b""):
                h.update(block)
    return h.hexdigest()[:20]


def export_int8(ce: Any, out: Path) -> Path:
    """Export ``ce`` (a float32 sentence-transformers CrossEncoder) to ONNX and quantize it
    to int8 at ``out`` (atomic)."""
    import torch

    require("onnx", "dense")
    q = require("onnxruntime.quantization", "dense")
    from onnxruntime.quantization.shape_inference import quant_pre_process

    model = ce.model.float().eval()
    sample = ce.tokenizer(
        ["a query", "another query"],
        ["a passage", "a longer passage to pad"],
        padding=True,
        truncation=True,
        return_tensors="pt",
    )
    names = [k for k in _INPUTS if k in sample]

    class _Logits(torch.nn.Module):
        def __init__(self, inner: Any) -> None:
            super().__init__()
            self.inner = inner

        def forward(self, *args: Any) -> Any:
            return self.inner(**dict(zip(names, args, strict=True))).logits

    out.parent.mkdir(parents=True, exist_ok=True)
    with tempfile.TemporaryDirectory(dir=out.parent) as tmp:
        fp32, pre, int8 = (Path(tmp) / n for n in ("fp32.onnx", "pre.onnx", ONNX_FILE))
        axes = {k: {0: "batch", 1: "tokens"} for k in names} | {"logits": {0: "batch"}}
        # the tracer warns about shape checks it freezes; the export is verified against
        # fp32 torch on batches of other shapes (tests/integration), so keep them quiet
        with torch.no_grad(), warnings.catch_warnings():
            warnings.simplefilter("ignore")
            torch.onnx.export(
                _Logits(model),
                tuple(sample[k] for k in names),
                str(fp32),
                input_names=names,
                output_names=["logits"],
                dynamic_axes=axes,
                opset_version=17,
                dynamo=False,
            )
        quant_pre_process(str(fp32), str(pre), skip_symbolic_shape=True)
        q.quantize_dynamic(str(pre), str(int8), per_channel=True, weight_type=q.QuantType.QInt8)
        os.replace(int8, out)
    return out


class OnnxInt8Runner:
    """Logits of (query, passage) pairs from the int8 ONNX export of ``ce``."""

    def __init__(self, ce: Any, model_dir: str | Path, cache_root: str | Path) -> None:
        ort = require("onnxruntime", "dense")
        import torch

        self.tokenizer, self.max_length = ce.tokenizer, _max_length(ce)
        path = Path(cache_root) / "onnx" / fingerprint(model_dir) / ONNX_FILE
        if not path.is_file():
            log.info("exporting %s to int8 ONNX at %s (once per model)", model_dir, path)
            export_int8(ce, path)
        self.path = path
        opts = ort.SessionOptions()
        opts.intra_op_num_threads = torch.get_num_threads()
        opts.inter_op_num_threads = 1
        self._session = ort.InferenceSession(str(path), opts, providers=["CPUExecutionProvider"])
        self._names = [i.name for i in self._session.get_inputs()]

    def logits(self, pairs: Sequence[tuple[str, str]], batch_size: int = 32) -> np.ndarray:
        out = np.empty(len(pairs), dtype=np.float32)
        order = np.argsort([-(len(q) + len(p)) for q, p in pairs], kind="stable")
        for start in range(0, len(pairs), batch_size):
            idx = order[start : start + batch_size]
            enc = self.tokenizer(
                [pairs[i][0] for i in idx],
                [pairs[i][1] for i in idx],
                padding=True,
                truncation=True,
                max_length=self.max_length,
                return_tensors="np",
            )
            feed = {n: enc[n].astype(np.int64) for n in self._names}
            out[idx] = self._session.run(None, feed)[0].reshape(len(idx), -1)[:, 0]
        return out


def _max_length(ce: Any) -> int | None:
    """The CrossEncoder's truncation length (``max_seq_length`` in sentence-transformers 6;
    ``max_length`` before)."""
    value = getattr(ce, "max_seq_length", None)
    return value if value is not None else getattr(ce, "max_length", None)
