"""The citer trains from the shipped relevance cross-encoder (one short epoch on a few real
SciFact claims) and loads back as inference reads it: the float16 adapter file merged into
the cross-encoder's weights scores every sentence as the adapted model it was trained as
(a differential check of training against inference, through the shipped model); and
the citer stage of a recipe adds it to a copy of the shipped verifier whose earlier stages
are done, keeping everything else."""

from __future__ import annotations

from dataclasses import replace

import numpy as np
import pytest

from sciera.errors import ScieraError

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
    # an ensemble: its first member is this citer (reused: nothing retrained), the other
    # trains by its own recipe in its own folder; loaded, the ensemble's logit is the mean
    pair = fit_citer(replace(cfg, members=2), data, tmp_path)
    assert [e.seconds for e in pair.state.epochs] == [e.seconds for e in fitted.state.epochs]
    (other,) = pair.members
    assert other.adapters.parent != fitted.adapters.parent and other.cfg == replace(
        cfg, members=2
    ).member(1)
    both, second = pair.load(), other.load()
    assert len(both.models) == 2
    for cid in data.dev_ids:
        claim = data.claims[cid]
        abstracts = [data.abstracts[d] for d in claim.evidence]
        mean = (
            np.concatenate(loaded.logits(claim.claim, abstracts))
            + np.concatenate(second.logits(claim.claim, abstracts))
        ) / 2
        assert np.allclose(np.concatenate(both.logits(claim.claim, abstracts)), mean, atol=1e-5)


def test_a_citer_added_to_the_shipped_verifier_keeps_everything_else(data, tmp_path, monkeypatch):
    import json
    import shutil

    from sciera.artifacts.registry import SHIPPED, VERIFIER
    from sciera.settings import Settings
    from sciera.train import verifier_run
    from sciera.train.citer_fit import CiterConfig
    from sciera.train.recipe import StageLog, settings_key
    from sciera.train.verifier_data import VerifierDataSpec
    from sciera.train.verifier_job import VerifierJob, run_key
    from sciera.train.verifier_policy import QUOTE_GRID
    from sciera.verify.network import VerifierNetwork

    shipped = SHIPPED[VERIFIER]["scifact-verifier"]
    folder = tmp_path / "models" / "v"
    shutil.copytree(shipped, folder)
    spec = VerifierDataSpec(claims="c.jsonl", sentences="s.jsonl", max_claims=8)
    citer = CiterConfig(rank=2, epochs=1, batch=16, members=2)
    job = VerifierJob(spec, str(folder), combine_llm=True, negated_claim=True, citer=citer)
    settings = Settings(home=str(tmp_path))
    with pytest.raises(ScieraError, match="other model or data settings"):
        verifier_run.train_verifier(job, settings, command="c")
    card = json.loads((folder / "sciera-card.json").read_text())
    card["run_key"] = run_key(job)  # as if trained with these settings
    (folder / "sciera-card.json").write_text(json.dumps(card))
    # the stages before the citer done with these settings (as the shipped model's were)
    work = tmp_path / "models" / "v.work"
    run = verifier_run.Run(job, settings, folder, work, data, {})
    log = StageLog(verifier_run.stage_log(folder))
    for stage in verifier_run.stages(run)[:3]:
        log.record(stage.name, settings_key(stage.settings))
    monkeypatch.setattr(verifier_run, "prepare_verifier", lambda *a, **k: data)
    said: list[str] = []
    result = verifier_run.train_verifier(job, settings, command="add", say=said.append)

    new = result.card
    assert said[-2:] == ["citer: ...", "decide: ..."]
    assert sum(line.endswith("skipped") for line in said) == 3
    # this job has no decider section: the shipped folder's decider is taken out
    assert "decider" in card and "decider" not in new
    assert not (folder / "sciera-decider-question.json").exists()
    assert new["command"] == "add" and "citer_added" in new and new["citer"]["rank"] == 2
    kept = {k: v for k, v in card["policy"].items() if k != "min_quoted"}
    assert {k: v for k, v in new["policy"].items() if k != "min_quoted"} == kept
    assert [t["min_quoted"] for t in new["dev"]["quote_trials"]] == list(QUOTE_GRID)
    assert new["combiner"]["claim"] == card["combiner"]["claim"]  # the combiners kept
    for name in (
        "model.safetensors",
        "sciera-verdict-calibrator.json",
        "sciera-combiner-claim.json",
    ):
        assert (folder / name).read_bytes() == (shipped / name).read_bytes()
    assert "Citer added" in (folder / "README.md").read_text()
    # the shipped folder carries its own citer (rank 16): this one replaced it
    citer = "sciera-citer.safetensors"
    assert (folder / citer).stat().st_size < (shipped / citer).stat().st_size
    # an ensemble of two: both files ship, the card names them, the network loads both
    assert new["citer"]["adapters"] == [citer, "sciera-citer-2.safetensors"]
    assert (folder / "sciera-citer-2.safetensors").is_file()
    assert len(new["citer"]["training"]["members"]) == 1
    assert (
        "member 2 the same with 4 hard and 2 random negatives" in (folder / "README.md").read_text()
    )
    manifest = json.loads((folder / "sciera-manifest.json").read_text())
    assert "sciera-citer-2.safetensors" in json.dumps(manifest)
    net = VerifierNetwork.load(folder)
    assert net.citer is not None and net.citer.calibrator is not None
    assert len(net.citer.models) == 2
    claim = data.claims[data.dev_ids[0]]
    abstracts = [data.abstracts[d] for d in claim.evidence]
    assert all(0.0 <= p <= 1.0 for per in net.citer.score_many(claim.claim, abstracts) for p in per)
