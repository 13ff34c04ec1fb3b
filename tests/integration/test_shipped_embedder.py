"""The dense embedder sciera ships (`scifact-minilm`): present, small, carded with its split
discipline, loaded offline in float32 from float16 weights, and a better SciFact retriever
than the MiniLM it was trained from on test claims. Its quality over all 300 test claims is
measured by benchmarks/experiments/scifact_embedder_shipped.yaml (README rows), not here."""

from __future__ import annotations

import json

import numpy as np
import pytest

pytestmark = pytest.mark.integration


@pytest.fixture(scope="module")
def shipped():
    from sciera.embed.registry import create_embedder
    from sciera.settings import EmbedSettings

    return create_embedder(EmbedSettings(backend="scifact-minilm", batch_size=16))


def test_shipped_embedder_files_and_card():
    from sciera.artifacts.registry import EMBEDDER, SHIPPED

    folder = SHIPPED[EMBEDDER]["scifact-minilm"]
    size = sum(f.stat().st_size for f in folder.rglob("*") if f.is_file())
    assert size <= 50 * 2**20, f"shipped embedder is {size / 2**20:.1f} MB (limit 50)"
    card = json.loads((folder / "sciera-card.json").read_text())
    assert card["command"] == f"sciera train embedder {card['recipe']['path']}"
    assert card["recipe"]["content"]["data"]["exclude_ssli"]
    assert {s["kind"] for s in card["splits"]["excluded"]} == {"qrels", "ssli"}
    assert any(s["path"].endswith("qrels/test.tsv") for s in card["splits"]["excluded"])


def test_loads_in_float32_with_a_weights_fingerprint(shipped):
    import torch

    assert shipped.name == "scifact-minilm" and shipped.dim == 384
    assert shipped.weights  # keys cached vectors and dense indexes
    assert {p.dtype for p in shipped._model.parameters()} == {torch.float32}
    v = shipped.embed_queries(["vitamin D and fracture risk"])
    assert v.dtype == np.float32 and abs(float(np.linalg.norm(v[0])) - 1.0) < 1e-4


def test_ranks_test_claims_gold_higher_than_base_minilm(shipped, scifact_dir):
    """40 test claims ranked by cosine over a pool of their gold abstracts and the first 300
    corpus abstracts: the trained embedder's mean reciprocal rank of the gold is not below
    MiniLM's."""
    from sciera.corpus import load_beir_queries, load_qrels
    from sciera.embed.registry import create_embedder
    from sciera.settings import EmbedSettings

    docs = [json.loads(line) for line in (scifact_dir / "corpus.jsonl").read_text().splitlines()]
    by_id = {d["_id"]: f"{d['title']}. {d['text']}" for d in docs}
    queries = load_beir_queries(scifact_dir)
    qrels = load_qrels(scifact_dir / "qrels" / "test.tsv")
    qids = sorted(qrels)[:40]
    gold = sorted({d for q in qids for d in qrels[q]})
    pool = sorted(set(gold) | {d["_id"] for d in docs[:300]})
    texts = [by_id[d] for d in pool]

    def mrr(embedder) -> float:
        p = embedder.embed_passages(texts)
        q = embedder.embed_queries([queries[x] for x in qids])
        sims = q @ p.T
        out = []
        for i, qid in enumerate(qids):
            order = [pool[j] for j in np.argsort(-sims[i], kind="stable")]
            out.append(1.0 / (1 + min(order.index(d) for d in qrels[qid])))
        return float(np.mean(out))

    base = create_embedder(EmbedSettings(backend="minilm", batch_size=16))
    trained, reference = mrr(shipped), mrr(base)
    assert trained >= reference, (trained, reference)
