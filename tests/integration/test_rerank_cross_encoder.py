"""The cross-encoder loading and scoring path on a tiny local model this test builds.

The model is a randomly initialised one-layer BERT classifier with a ten-word vocabulary,
saved with ``save_pretrained`` and no sciera card: it checks loading from a local path, the
scoring plumbing and the raw-score path (its scores carry no meaning). The shipped trained
model is tested in test_shipped_cross_encoder.py.
"""

from __future__ import annotations

import sys
from pathlib import Path

import pytest

pytestmark = pytest.mark.integration
sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "unit" / "rerank"))

from conformance import check_reranker  # noqa: E402

from sciera.types import Passage, Ranking, ScoredPassage  # noqa: E402

WORDS = "vitamin d deficiency fracture risk galaxies rotate statin muscle pain".split()  # noqa: SIM905


@pytest.fixture(scope="module")
def tiny_model(tmp_path_factory) -> Path:
    torch = pytest.importorskip("torch")
    transformers = pytest.importorskip("transformers")
    d = tmp_path_factory.mktemp("tiny-cross-encoder")
    (d / "vocab.txt").write_text("\n".join(["[PAD]", "[UNK]", "[CLS]", "[SEP]", "[MASK]", *WORDS]))
    tok = transformers.BertTokenizerFast(vocab_file=str(d / "vocab.txt"))
    torch.manual_seed(0)
    cfg = transformers.BertConfig(
        vocab_size=len(WORDS) + 5,
        hidden_size=16,
        num_hidden_layers=1,
        num_attention_heads=2,
        intermediate_size=32,
        max_position_embeddings=64,
        num_labels=1,
    )
    transformers.BertForSequenceClassification(cfg).save_pretrained(d)
    tok.save_pretrained(d)
    return d


def _ranking() -> Ranking:
    texts = ["statin muscle pain", "vitamin d deficiency fracture risk", "galaxies rotate"]
    items = tuple(
        ScoredPassage(Passage(f"d{i}#0", f"d{i}", 0, "", t), 3.0 - i, i + 1)
        for i, t in enumerate(texts)
    )
    return Ranking("vitamin d fracture risk", items, "bm25")


def test_cross_encoder_from_local_directory_passes_conformance(tiny_model):
    import sentence_transformers
    import torch

    from sciera.rerank.registry import make_reranker

    rr = make_reranker("cross_encoder", model=str(tiny_model), max_length=64)
    out = check_reranker(rr, _ranking())
    # the scores are the model's raw outputs (logits) for each (query, passage) pair, as
    # sentence-transformers' CrossEncoder gives them (an independent implementation)
    reference = sentence_transformers.CrossEncoder(str(tiny_model), max_length=64)
    direct = reference.predict(
        [("vitamin d fracture risk", "statin muscle pain")], activation_fn=torch.nn.Identity()
    )
    got = next(it.score for it in out if it.passage_id == "d0#0")
    assert got == pytest.approx(float(direct[0]), abs=1e-6)


def test_a_model_without_a_card_has_raw_scores_only(tiny_model):
    from sciera.errors import ScieraError
    from sciera.rerank.registry import make_reranker

    rr = make_reranker("cross_encoder", model=str(tiny_model), max_length=64)
    assert rr.score_mode == "raw" and rr.calibrator is None
    with pytest.raises(ScieraError, match="no sciera card"):
        make_reranker("cross_encoder", model=str(tiny_model), score="calibrated")
    with pytest.raises(ValueError, match="score must be one of"):
        make_reranker("cross_encoder", model=str(tiny_model), score="sigmoid")


def test_trained_names_resolve_under_sciera_home(tmp_path, tiny_model):
    from sciera.rerank.cross_encoder import resolve_model

    (tmp_path / "models").mkdir()
    (tmp_path / "models" / "mine").symlink_to(tiny_model)
    assert resolve_model("mine", tmp_path) == str(tmp_path / "models" / "mine")
    assert resolve_model("org/hub-name", tmp_path) == "org/hub-name"
