"""The citer trains from the shipped relevance cross-encoder (one short epoch on a few real
SciFact claims) and loads back as inference reads it: the float16 adapter file merged into
the cross-encoder's weights scores every sentence as the adapted model it was trained as
(a differential check of training against inference, through the shipped model)."""

from __future__ import annotations

import numpy as np
import pytest

pytestmark = pytest.mark.integration


@pytest.fixture(scope="module")
def data(scifact_dir):
    from sciera.datasets.claims import read_gold
    from sciera.train.splits import SplitGuard
    from sciera.train.verifier_data import SentenceExample, VerifierData, load_abstracts

    abstracts = load_abstracts(scifact_dir / "corpus_sentences.jsonl")
    claims = [c for c in read_gold(scifact_dir / "claims_train.jsonl") if c.evidence][:8]
    examples = []
    for c in claims:
        for doc, ev in c.evidence.items():
            gold = set().union(*ev.rationales)
            for i in range(len(abstracts[doc].sentences)):
                kind = "rationale" if i in gold else "evidence_other"
                examples.append(SentenceExample(c.id, doc, i, int(i in gold), kind, 0.0))
    used = {d for c in claims for d in c.evidence}
    ids = [c.id for c in claims]
    return VerifierData(
        {d: abstracts[d] for d in used},
        {c.id: c for c in claims},
        ids[:6],
        ids[6:],
        [],
        {},
        [e for e in examples if e.claim_id in ids[:6]],
        [],
        [],
        [],
        SplitGuard(),
    )


def test_the_citer_trains_and_loads_as_inference_reads_it(data, tmp_path):
    from sciera.train.citer_fit import CiterConfig, CiterTrainer, fit_citer

    cfg = CiterConfig(rank=2, epochs=1, batch=16)
    fitted = fit_citer(cfg, data, tmp_path)
    assert fitted.state.best_epoch == 1 and fitted.adapters.is_file()
    assert fitted.adapters.stat().st_size < 600_000  # rank 2 adapters and the head, float16
    dev = fitted.state.epochs[0].dev
    assert 0.0 < dev["average_precision"] <= 1.0 and dev["abstracts"] >= 2
    # the trained (still wrapped) model, resumed from the run's checkpoint
    trained = CiterTrainer(cfg, data, tmp_path / f"citer-{cfg.key()}", None).citer()
    loaded = fitted.load()
    for cid in data.dev_ids:
        claim = data.claims[cid]
        abstracts = [data.abstracts[d] for d in claim.evidence]
        want = np.concatenate(trained.logits(claim.claim, abstracts))
        got = np.concatenate(loaded.logits(claim.claim, abstracts))
        assert np.allclose(got, want, atol=0.05)  # float16 adapters on disk
        probs = loaded.score_many(claim.claim, abstracts)
        assert all(0.0 <= p <= 1.0 for per in probs for p in per)
    # a rerun reuses the finished epochs (nothing retrained)
    again = fit_citer(cfg, data, tmp_path)
    assert [e.seconds for e in again.state.epochs] == [e.seconds for e in fitted.state.epochs]
