"""sciera runs its shipped embedder and cross-encoder with transformers alone
(sciera.embed.plain); these hold them to sentence-transformers, an independent
implementation, on real SciFact text, and check the answering path never imports it."""

from __future__ import annotations

import json
import subprocess
import sys

import numpy as np
import pytest

pytestmark = pytest.mark.integration


@pytest.fixture(scope="module")
def texts(scifact_dir) -> list[str]:
    path = scifact_dir / "corpus.jsonl"
    with path.open(encoding="utf-8") as f:
        docs = [json.loads(line) for line, _ in zip(f, range(48), strict=False)]
    # long abstracts (cut at the token limit), padding whitespace, a one-word and an empty text
    return [d["title"] + " " + d["text"] for d in docs] + ["  vitamin D  ", "aspirin", ""]


def test_shipped_embedder_gives_sentence_transformers_vectors(texts):
    import sentence_transformers
    import torch

    from sciera.artifacts.registry import EMBEDDER, SHIPPED
    from sciera.embed.registry import create_embedder
    from sciera.settings import EmbedSettings

    ours = create_embedder(EmbedSettings(backend="scifact-minilm", batch_size=16))
    assert ours._tokenizer is not None  # the plain path, not sentence-transformers
    folder = str(SHIPPED[EMBEDDER]["scifact-minilm"])
    reference = sentence_transformers.SentenceTransformer(
        folder, device="cpu", model_kwargs={"dtype": torch.float32}
    )
    want = reference.encode(texts, convert_to_numpy=True, normalize_embeddings=True)
    assert np.abs(ours.embed_passages(texts) - want).max() < 1e-5
    assert np.abs(ours.embed_queries(texts[:3]) - want[:3]).max() < 1e-5


def test_shipped_cross_encoder_gives_sentence_transformers_logits(texts):
    import sentence_transformers
    import torch

    from sciera.rerank.cross_encoder import CrossEncoderReranker
    from sciera.types import Passage

    ours = CrossEncoderReranker(precision="fp32", batch_size=8)
    query = "Aspirin reduces the risk of colorectal cancer."
    passages = [Passage(f"d{i}#0", f"d{i}", 0, "", t) for i, t in enumerate(texts)]
    length = int(ours.card["max_length"])  # the card's: what the reranker cuts pairs at
    assert ours._model.max_seq_length == length
    reference = sentence_transformers.CrossEncoder(
        ours.path, max_length=length, model_kwargs={"dtype": torch.float32}
    )
    want = reference.predict([(query, t) for t in texts], activation_fn=torch.nn.Identity())
    got = np.array(ours.logits(query, passages))
    assert np.abs(got - want).max() < 1e-4
    assert ours.logits(query, []) == []


def test_answering_does_not_import_sentence_transformers():
    code = (
        "import sys\n"
        "from sciera.embed.registry import create_embedder\n"
        "from sciera.rerank.cross_encoder import CrossEncoderReranker\n"
        "from sciera.settings import EmbedSettings\n"
        "create_embedder(EmbedSettings(backend='scifact-minilm')).embed_queries(['a'])\n"
        "CrossEncoderReranker(precision='fp32')\n"
        "print('sentence_transformers' in sys.modules, 'sklearn' in sys.modules)\n"
    )
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True)
    assert out.stdout.split() == ["False", "False"], out.stderr[-2000:]
