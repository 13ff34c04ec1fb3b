"""verify_selector_probe.py: the re-picking rule and the low-rank adapters (a tiny random
BERT built in memory, no shipped model)."""

from __future__ import annotations

import numpy as np
import pytest

SCRIPT = "verify_selector_probe"


def test_repick_keeps_the_best_and_those_within_the_gap(bench) -> None:
    x = np.array([0.0, 3.0, 2.5, -1.0, 1.2])
    assert bench.repick(x, 0.6) == (1, 2)
    assert bench.repick(x, 0.1) == (1,)
    assert bench.repick(x, 100.0) == (1, 2, 4)  # at most three
    assert bench.repick(np.array([1.0, 1.0]), 0.0) == (0, 1)  # ties stay in index order


def _tiny():
    torch = pytest.importorskip("torch")
    transformers = pytest.importorskip("transformers")
    torch.manual_seed(0)
    cfg = transformers.BertConfig(
        vocab_size=50,
        hidden_size=16,
        num_hidden_layers=2,
        num_attention_heads=2,
        intermediate_size=32,
        num_labels=1,
    )
    return torch, transformers.BertForSequenceClassification(cfg).eval()


def test_adapters_start_at_the_base_model_and_train_only_themselves(bench) -> None:
    torch, model = _tiny()
    ids = torch.tensor([[1, 5, 7, 2, 9, 3]])
    before = model(input_ids=ids).logits.detach().clone()
    total = sum(p.numel() for p in model.parameters())
    trainable = bench.add_lora(model, 4)
    assert torch.allclose(model(input_ids=ids).logits, before)  # B starts at zero
    names = {n for n, p in model.named_parameters() if p.requires_grad}
    # per layer: query, key, value, attention output, intermediate, output -> A and B each
    assert sum(n.endswith((".A", ".B")) for n in names) == 2 * 6 * 2
    assert all(
        n.endswith((".A", ".B")) or n.startswith(("classifier", "bert.pooler")) for n in names
    )
    assert 0 < trainable < total
    # a step on the adapters changes the output; the frozen weights stay as they were
    frozen = model.bert.embeddings.word_embeddings.weight.detach().clone()
    opt = torch.optim.SGD([p for p in model.parameters() if p.requires_grad], lr=0.5)
    for _ in range(2):
        loss = model(input_ids=ids).logits.sum()
        opt.zero_grad()
        loss.backward()
        opt.step()
    assert not torch.allclose(model(input_ids=ids).logits, before)
    assert torch.equal(model.bert.embeddings.word_embeddings.weight, frozen)
