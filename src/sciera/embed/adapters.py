"""Low-rank adapters (LoRA) on a transformer's linear layers: train a few hundred thousand
parameters beside a frozen model, keep them in a file of a megabyte or two, and fold them
into the model's weights when loading, so inference costs what the plain model costs.

An adapted linear layer computes ``W x + b + (alpha / rank) B A x`` with ``A`` (rank x in)
and ``B`` (out x rank); ``B`` starts at zero, so training starts from the model exactly.
:func:`add_adapters` wraps a model's encoder layers for training (everything else frozen
but its head: the classifier and pooler); :func:`adapter_state` is what to save;
:func:`merge_adapters` folds a saved state into a plain copy of the same model.
"""

from __future__ import annotations

import math
from pathlib import Path
from typing import Any

TARGETS = ("query", "key", "value", "dense")
"""The encoder's linear layers that get an adapter (BERT's names: attention and MLP)."""
_HEAD = ("classifier",)
_POOLER = ".pooler."


def _is_head(name: str) -> bool:
    return name.startswith(_HEAD) or _POOLER in f".{name}."


def adapted_layers(model: Any) -> list[str]:
    """The names of the encoder's linear layers :data:`TARGETS` picks."""
    import torch

    return [
        n
        for n, m in model.named_modules()
        if isinstance(m, torch.nn.Linear) and ".encoder." in f".{n}" and n.endswith(TARGETS)
    ]


def add_adapters(model: Any, rank: int, alpha: float | None = None) -> int:
    """Freeze ``model``, wrap each of its :func:`adapted_layers` in a rank-``rank`` adapter
    (scale ``alpha / rank``; ``alpha`` defaults to ``2 * rank``) and leave the head (the
    classifier and pooler) trainable. Returns the number of trainable parameters."""
    import torch

    if rank < 1:
        raise ValueError(f"rank must be at least 1, got {rank}")
    scale = (alpha if alpha is not None else 2.0 * rank) / rank

    class LowRank(torch.nn.Module):
        def __init__(self, base: Any) -> None:
            super().__init__()
            self.base = base
            self.scale = scale
            self.A = torch.nn.Parameter(torch.empty(rank, base.in_features))
            torch.nn.init.kaiming_uniform_(self.A, a=math.sqrt(5))
            self.B = torch.nn.Parameter(torch.zeros(base.out_features, rank))

        def forward(self, x: Any) -> Any:
            return self.base(x) + (x @ self.A.t() @ self.B.t()) * self.scale

    for p in model.parameters():
        p.requires_grad = False
    for name in adapted_layers(model):
        parent, leaf = name.rsplit(".", 1)
        owner = model.get_submodule(parent)
        setattr(owner, leaf, LowRank(getattr(owner, leaf)))
    for name, p in model.named_parameters():
        if _is_head(name):
            p.requires_grad = True
    return sum(p.numel() for p in model.parameters() if p.requires_grad)


def adapter_state(model: Any) -> dict[str, Any]:
    """The trainable tensors of a model :func:`add_adapters` wrapped, by parameter name
    (an adapter's ``<layer>.A`` / ``<layer>.B``, the head's own names)."""
    return {n: p.detach().clone() for n, p in model.named_parameters() if p.requires_grad}


def merge_adapters(model: Any, state: dict[str, Any], rank: int, alpha: float) -> None:
    """Fold ``state`` (:func:`adapter_state` of the same model, adapted at ``rank`` and
    ``alpha``) into the plain ``model``'s weights, in place."""
    import torch

    params = dict(model.named_parameters())
    scale = alpha / rank
    with torch.no_grad():
        for name, value in state.items():
            if name.endswith(".A"):
                layer = name[: -len(".A")]
                weight = model.get_submodule(layer).weight
                b = state.get(f"{layer}.B")
                if b is None:
                    raise ValueError(f"adapter of {layer} has A but no B")
                weight += (b.float() @ value.float()) * scale
            elif name.endswith(".B"):
                continue
            elif name in params:
                params[name].copy_(value.float())
            else:
                raise ValueError(f"adapter state names {name!r}, which the model does not have")


def save_adapters(
    state: dict[str, Any], path: Path, rank: int, alpha: float, fp16: bool = True
) -> None:
    """``state`` (:func:`adapter_state`) as a safetensors file (float16 by default), with
    ``rank`` and ``alpha`` in its metadata; written whole or not at all."""
    from safetensors.torch import save_file

    cast = {n: (t.half() if fp16 else t.float()).contiguous() for n, t in state.items()}
    tmp = path.with_name(path.name + ".tmp")
    save_file(cast, str(tmp), metadata={"rank": str(rank), "alpha": str(alpha)})
    tmp.replace(path)


def load_adapters(path: Path) -> tuple[dict[str, Any], int, float]:
    """(state, rank, alpha) of a file :func:`save_adapters` wrote."""
    from safetensors import safe_open

    state = {}
    with safe_open(str(path), framework="pt") as f:
        meta = f.metadata() or {}
        for key in f.keys():  # noqa: SIM118 (a safetensors handle, not a dict)
            state[key] = f.get_tensor(key)
    if "rank" not in meta or "alpha" not in meta:
        raise ValueError(f"{path}: no rank/alpha in its metadata: not an adapter file")
    return state, int(meta["rank"]), float(meta["alpha"])
