"""Low-rank adapters on a tiny randomly initialised BERT classifier (no trained model): they
start at the model exactly, train only themselves and the head, and folded into a plain copy
of the model give the adapted model's outputs (a differential check of the merge against
the adapter's own forward pass); the file keeps rank and alpha."""

from __future__ import annotations

import pytest

torch = pytest.importorskip("torch")
transformers = pytest.importorskip("transformers")

from sciera.embed.adapters import (  # noqa: E402
    adapted_layers,
    adapter_state,
    add_adapters,
    load_adapters,
    merge_adapters,
    save_adapters,
)


def tiny_classifier(seed: int = 0):
    torch.manual_seed(seed)
    config = transformers.BertConfig(
        vocab_size=50,
        hidden_size=16,
        num_hidden_layers=2,
        num_attention_heads=2,
        intermediate_size=32,
        max_position_embeddings=32,
        num_labels=1,
    )
    return transformers.BertForSequenceClassification(config).eval()


def inputs():
    g = torch.Generator().manual_seed(1)
    return {
        "input_ids": torch.randint(0, 50, (3, 7), generator=g),
        "attention_mask": torch.ones(3, 7, dtype=torch.long),
    }


def test_adapters_start_at_the_model_and_train_only_themselves_and_the_head():
    model, plain = tiny_classifier(), tiny_classifier()
    frozen = {n: p.detach().clone() for n, p in plain.named_parameters()}
    # 2 layers x (query, key, value, attention output, intermediate, output) = 12
    assert len(adapted_layers(model)) == 12
    trainable = add_adapters(model, rank=4)
    with torch.no_grad():
        assert torch.allclose(model(**inputs()).logits, plain(**inputs()).logits, atol=1e-6)
    names = {n for n, p in model.named_parameters() if p.requires_grad}
    assert all(n.endswith((".A", ".B")) or "pooler" in n or "classifier" in n for n in names)
    assert trainable == sum(p.numel() for n, p in model.named_parameters() if n in names)
    opt = torch.optim.SGD([p for p in model.parameters() if p.requires_grad], lr=0.5)
    model.train()
    loss = model(**inputs()).logits.pow(2).sum()
    loss.backward()
    opt.step()
    for n, p in model.named_parameters():
        base = n.replace(".base.", ".")
        if not p.requires_grad and base in frozen:
            assert torch.equal(p, frozen[base]), n  # the frozen body is unchanged
    with pytest.raises(ValueError, match="rank"):
        add_adapters(tiny_classifier(), rank=0)


def test_merged_adapters_give_the_adapted_models_outputs(tmp_path):
    model = tiny_classifier()
    add_adapters(model, rank=4, alpha=8.0)
    with torch.no_grad():  # an adapted model that differs from the base
        for p in model.parameters():
            if p.requires_grad:
                p.add_(torch.randn_like(p) * 0.2)
    model.eval()
    with torch.no_grad():
        want = model(**inputs()).logits
    base = tiny_classifier()
    with torch.no_grad():
        assert not torch.allclose(base(**inputs()).logits, want, atol=1e-3)
    path = tmp_path / "a.safetensors"
    save_adapters(adapter_state(model), path, rank=4, alpha=8.0, fp16=False)
    state, rank, alpha = load_adapters(path)
    assert (rank, alpha) == (4, 8.0) and set(state) == set(adapter_state(model))
    merge_adapters(base, state, rank, alpha)
    with torch.no_grad():
        assert torch.allclose(base(**inputs()).logits, want, atol=1e-5)
    # float16 on disk: the same outputs to float16's precision
    save_adapters(adapter_state(model), path, rank=4, alpha=8.0)
    half, _, _ = load_adapters(path)
    assert all(t.dtype == torch.float16 for t in half.values())
    other = tiny_classifier()
    merge_adapters(other, half, 4, 8.0)
    with torch.no_grad():
        assert torch.allclose(other(**inputs()).logits, want, atol=1e-2)


def test_a_state_the_model_cannot_take_is_refused(tmp_path):
    model = tiny_classifier()
    add_adapters(model, rank=2)
    state = adapter_state(model)
    layer = next(n[: -len(".A")] for n in state if n.endswith(".A"))
    with pytest.raises(ValueError, match="no B"):
        merge_adapters(tiny_classifier(), {f"{layer}.A": state[f"{layer}.A"]}, 2, 4.0)
    with pytest.raises(ValueError, match="does not have"):
        merge_adapters(tiny_classifier(), {"nope.weight": torch.zeros(1)}, 2, 4.0)
    from safetensors.torch import save_file

    plain = tmp_path / "plain.safetensors"
    save_file({"x": torch.zeros(1)}, str(plain))
    with pytest.raises(ValueError, match="not an adapter file"):
        load_adapters(plain)
