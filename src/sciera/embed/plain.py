"""Transformer inference with ``transformers`` alone: mean-pooled sentence embeddings and
sequence-pair logits.

sentence-transformers is what trains sciera's models and what loads any model by name, but
importing it costs about 3 s on 2 cores (it pulls in scikit-learn and its backends), which
every ``sciera ask`` paid before its first retrieval. The shipped embedder, the shipped
cross-encoder and the verifier need only a tokenizer, a forward pass and, for embeddings, a
masked mean: this module does that. A folder it cannot read the same way
(:func:`mean_pooled_config` returns ``None``: another pooling, lower-casing, prompts) is
left to sentence-transformers. The integration tests hold both to sentence-transformers'
outputs on the shipped models.
"""

from __future__ import annotations

import json
from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import numpy as np

_MODULES = ("Transformer", "Pooling", "Normalize")


@dataclass(frozen=True)
class MeanPooled:
    """How a sentence-transformers folder embeds: its max length in tokens."""

    max_length: int | None


def _json(path: Path) -> dict[str, Any] | list[Any] | None:
    try:
        return json.loads(path.read_text(encoding="utf-8"))
    except (OSError, ValueError):
        return None


def _mean_pooling(config: Any) -> bool:
    if not isinstance(config, dict):
        return False
    if "pooling_mode" in config:  # sentence-transformers 6
        return config["pooling_mode"] == "mean" and config.get("include_prompt", True)
    flags = {k: v for k, v in config.items() if k.startswith("pooling_mode_")}
    return flags.get("pooling_mode_mean_tokens") is True and sum(map(bool, flags.values())) == 1


def mean_pooled_config(folder: str | Path) -> MeanPooled | None:
    """The embedding recipe of a local sentence-transformers ``folder`` when it is a plain
    transformer, mean pooling and (optionally) normalization without prompts or
    lower-casing; ``None`` for anything else (a hub name, another pooling, ...)."""
    root = Path(folder)
    modules = _json(root / "modules.json")
    if not root.is_dir() or not isinstance(modules, list):
        return None
    kinds = [str(m.get("type", "")).rsplit(".", 1)[-1] for m in modules if isinstance(m, dict)]
    if len(kinds) != len(modules) or tuple(kinds) not in (_MODULES, _MODULES[:2]):
        return None
    if modules[0].get("path", "") != "":
        return None
    if not _mean_pooling(_json(root / modules[1].get("path", "") / "config.json")):
        return None
    bert = _json(root / "sentence_bert_config.json") or {}
    if not isinstance(bert, dict) or bert.get("do_lower_case"):
        return None
    st = _json(root / "config_sentence_transformers.json") or {}
    prompts = (st.get("prompts") or {}) if isinstance(st, dict) else {}
    if isinstance(st, dict) and (st.get("default_prompt_name") or any(prompts.values())):
        return None
    length = bert.get("max_seq_length")
    return MeanPooled(int(length) if length else None)


def load_encoder(
    folder: str | Path, kind: str = "embedding", device: str = "cpu"
) -> tuple[Any, Any]:
    """(the model in float32 eval mode, its tokenizer) from ``folder`` or a hub name:
    ``kind`` ``"embedding"`` (the bare encoder) or ``"classifier"`` (with its head). Weights
    may ship as float16; CPU math runs in float32 (float16 matmuls are slow)."""
    import torch
    from transformers import AutoModel, AutoModelForSequenceClassification, AutoTokenizer

    auto = AutoModel if kind == "embedding" else AutoModelForSequenceClassification
    model = auto.from_pretrained(str(folder), dtype=torch.float32)
    return model.float().to(device).eval(), AutoTokenizer.from_pretrained(str(folder))


def max_tokens(model: Any, tokenizer: Any, configured: int | None) -> int:
    """``configured``, else the tokenizer's limit, never above the model's positions."""
    limit = int(getattr(model.config, "max_position_embeddings", 0) or 0) or None
    length = configured or getattr(tokenizer, "model_max_length", None)
    if not length or length > 100_000:  # a tokenizer without a limit says 1e30
        length = limit or 512
    return min(int(length), limit) if limit else int(length)


def encode_pairs(tokenizer: Any, pairs: Sequence[tuple[str, str]], max_length: int) -> Any:
    """Token tensors of ``pairs`` (query or claim first), cut to ``max_length`` from the
    longer side."""
    return tokenizer(
        [a for a, _ in pairs],
        [b for _, b in pairs],
        truncation="longest_first",
        max_length=max_length,
        padding=True,
        return_tensors="pt",
    )


def _by_length(texts: Sequence[str]) -> list[int]:
    return sorted(range(len(texts)), key=lambda i: len(texts[i]))


def pair_logits(
    model: Any,
    tokenizer: Any,
    pairs: Sequence[tuple[str, str]],
    max_length: int,
    batch_size: int = 32,
    column: int | None = None,
) -> np.ndarray:
    """The logits of each pair (``[n, outputs]``, or ``[n]`` of one ``column``), batched by
    length (less padding), in input order; the model is put in eval mode and back."""
    import torch

    width = int(model.config.num_labels)
    out = np.zeros((len(pairs), width), dtype=np.float32)
    order = _by_length([a + b for a, b in pairs])
    was = model.training
    model.eval()
    with torch.inference_mode():
        for start in range(0, len(order), batch_size):
            idx = order[start : start + batch_size]
            tokens = encode_pairs(tokenizer, [pairs[i] for i in idx], max_length).to(model.device)
            out[idx] = model(**tokens).logits.float().cpu().numpy()
    model.train(was)
    return out if column is None else out[:, column]


def mean_pooled(
    model: Any, tokenizer: Any, texts: Sequence[str], max_length: int, batch_size: int = 64
) -> np.ndarray:
    """Unit-length mean-pooled embeddings of ``texts`` (``[n, dim]`` float32, input order):
    the token states averaged over the attention mask, as sentence-transformers' mean
    pooling does (texts stripped of surrounding whitespace, as it strips them)."""
    import torch

    dim = int(model.config.hidden_size)
    out = np.zeros((len(texts), dim), dtype=np.float32)
    stripped = [str(t).strip() for t in texts]
    order = _by_length(stripped)
    with torch.inference_mode():
        for start in range(0, len(order), batch_size):
            idx = order[start : start + batch_size]
            tokens = tokenizer(
                [stripped[i] for i in idx],
                truncation="longest_first",
                max_length=max_length,
                padding=True,
                return_tensors="pt",
            ).to(model.device)
            states = model(**tokens).last_hidden_state
            mask = tokens["attention_mask"].unsqueeze(-1).to(states.dtype)
            pooled = (states * mask).sum(1) / mask.sum(1).clamp(min=1e-9)
            out[idx] = torch.nn.functional.normalize(pooled, p=2, dim=1).float().cpu().numpy()
    return out


class PairClassifier:
    """A sequence-pair classifier (a cross-encoder) run with ``transformers`` alone. It
    carries what sentence-transformers' ``CrossEncoder`` exposes to an exporter (``model``,
    ``tokenizer``, ``max_seq_length``), so the int8 ONNX export reads either."""

    def __init__(
        self, folder: str | Path, max_length: int | None = None, device: str = "cpu"
    ) -> None:
        self.model, self.tokenizer = load_encoder(folder, "classifier", device)
        self.max_seq_length = max_tokens(self.model, self.tokenizer, max_length)

    def logits(self, pairs: Sequence[tuple[str, str]], batch_size: int = 32) -> np.ndarray:
        """The first output's logit of each pair, in input order."""
        if not pairs:
            return np.zeros(0, dtype=np.float32)
        return pair_logits(self.model, self.tokenizer, pairs, self.max_seq_length, batch_size, 0)
