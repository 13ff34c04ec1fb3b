"""Calibration-side SSLI questions in the fused calibrator's fit (no models: synthetic
logits over real feature code)."""

from __future__ import annotations

import json

import numpy as np
import pytest

from sciera.errors import ScieraError
from sciera.train import calibration_ssli as cs
from sciera.train.cross_encoder_run import FUSED_FEATURES, calibrate_on_dev, calibration_rows
from sciera.train.data import TrainQuery
from sciera.train.recalibrate import record_ssli


def _claims(n: int, rng) -> tuple[list[TrainQuery], list[np.ndarray]]:
    """Dev claims: the gold is the first stage's rank 1 for most, and the logit is a noisy
    signal, so a calibrator fitted on them leans on the first stage's rank."""
    recs, logits = [], []
    for i in range(n):
        gold = 0 if i % 5 else 3
        cands = tuple((f"c{i}-{j}#0", 1.0 - 0.05 * j) for j in range(10))
        recs.append(TrainQuery(f"c{i}", "q", (cands[gold][0],), cands, frozenset({f"c{i}-{gold}"})))
        x = rng.normal(0.0, 1.5, 10)
        x[gold] += 1.0
        logits.append(x)
    return recs, logits


def _ssli(n: int, rng) -> tuple[list[TrainQuery], list[np.ndarray]]:
    """SSLI questions: an injected distractor is the first stage's rank 1, the gold rank 3;
    the logit puts the gold well above the distractor."""
    recs, logits = [], []
    for i in range(n):
        ids = [f"ssli_s{i}_0", *(f"s{i}-{j}" for j in range(1, 10))]
        cands = tuple((f"{d}#0", 1.0 - 0.05 * j) for j, d in enumerate(ids))
        recs.append(TrainQuery(f"s{i}", "q", (cands[2][0],), cands, frozenset({ids[2]})))
        x = rng.normal(-3.0, 0.5, 10)
        x[0], x[2] = 1.0, 3.0
        logits.append(x)
    return recs, logits


def test_ssli_rows_teach_the_fused_weights_to_distrust_a_distractor_first():
    rng = np.random.default_rng(0)
    dev, dev_logits = _claims(80, rng)
    ssli, ssli_logits = _ssli(12, rng)
    plain = calibrate_on_dev(dev, dev_logits, "m")
    zero = calibrate_on_dev(dev, dev_logits, "m", ssli=ssli, ssli_logits=ssli_logits)
    fitted = calibrate_on_dev(
        dev, dev_logits, "m", ssli=ssli, ssli_logits=ssli_logits, ssli_weight=10
    )
    # weight 0 (the default) changes nothing and reports nothing
    assert zero.ssli is None
    assert zero.calibrators["fused"].coef == plain.calibrators["fused"].coef
    # the fused weights moved; the logit-only calibrator did not
    assert fitted.calibrators["calibrated"].coef == plain.calibrators["calibrated"].coef
    notes = fitted.calibrators["fused"].notes
    assert notes["fitted_on"] == "dev split + 12 SSLI questions x10"
    assert notes["candidates"] == 80 * 10 + 12 * 10 * 10
    assert set(fitted.ssli) == {"first_stage", "ce", "calibrated", "fused"}
    assert fitted.ssli["first_stage"]["distractor_first"] == 1.0
    assert fitted.ssli["ce"]["distractor_first"] == 0.0 and fitted.ssli["ce"]["hit@1"] == 1.0
    # fitted on dev alone, fused follows the first stage into the distractor; with the
    # SSLI rows it ranks the gold first
    cols, _ = calibration_rows(ssli, ssli_logits)
    X = np.column_stack([cols[f] for f in FUSED_FEATURES])
    alone = plain.calibrators["fused"].predict_matrix(X).reshape(12, 10)
    assert cs.distractor_stats(ssli, list(alone))["distractor_first"] >= 0.5
    assert fitted.ssli["fused"]["distractor_first"] == 0.0
    assert fitted.ssli["fused"]["hit@1"] == 1.0
    assert plain.modes["ce"] == fitted.modes["ce"]  # dev metrics of the logit stay the same


def test_distractor_stats_counts_ties_in_rank_order():
    ids = ["ssli_q_0#0", "g#0", "n#0"]
    rec = TrainQuery("q", "t", ("g#0",), tuple((p, 0.0) for p in ids), frozenset({"g"}))
    assert cs.distractor_stats([rec], [np.array([1.0, 1.0, 0.0])]) == {
        "hit@1": 0.0,
        "distractor_first": 1.0,
        "queries": 1.0,
    }
    assert cs.distractor_stats([rec], [np.array([0.0, 2.0, 1.0])])["hit@1"] == 1.0


def test_the_injected_copy_is_keyed_by_corpus_and_set_contents(tmp_path):
    a, b = tmp_path / "a.jsonl", tmp_path / "b.jsonl"
    a.write_text("one\n")
    b.write_text("one\n")
    key = cs.injected_dir(tmp_path, "corpora/scifact", [a])
    assert key == cs.injected_dir(tmp_path, "corpora/scifact", [a])
    assert key.parent == tmp_path and key.name.startswith("ssli-corpus-")
    assert key == cs.injected_dir(tmp_path, "corpora/scifact", [b])  # same contents
    assert key != cs.injected_dir(tmp_path, "corpora/other", [a])
    b.write_text("two\n")
    assert key != cs.injected_dir(tmp_path, "corpora/scifact", [b])


def _instance(qid: str, setting: str, distractor: bool) -> str:
    cands = [{"passage_id": "g#0", "text": "gold", "is_distractor": False, "distractor_type": ""}]
    if distractor:
        d = {"passage_id": f"ssli:{qid}:0", "text": "d", "is_distractor": True}
        cands.append({**d, "distractor_type": "misleading"})
    return json.dumps(
        {
            "id": f"{qid}/{setting}",
            "question": "why?",
            "answer": "because",
            "gold_passage_ids": ["g#0"],
            "setting": setting,
            "candidates": cands,
        }
    )


def test_sets_must_have_distractors_and_distinct_question_ids(tmp_path):
    one, two, none = tmp_path / "one.jsonl", tmp_path / "two.jsonl", tmp_path / "none.jsonl"
    one.write_text(_instance("q1", "ssli", True) + "\n")
    two.write_text(_instance("q1", "ssli", True) + "\n")
    none.write_text(_instance("q2", "base", False) + "\n")
    args = (None, None, {"name": "m"}, None, tmp_path)
    with pytest.raises(ScieraError, match="no SSLI-setting question with a distractor"):
        cs.prepare_ssli([none], *args)
    with pytest.raises(ScieraError, match="question q1 is also in"):
        cs.prepare_ssli([one, two], *args)


def _card() -> dict:
    return {
        "name": "m",
        "config": {"calibration_questions": 0},
        "data": {},
        "dev": {
            "modes": {"ce": {"ndcg@10": 0.7, "hit@1": 0.6, "queries": 9.0}},
        },
        "versions": {},
    }


def test_the_card_records_the_sets_and_forgets_them_when_dropped():
    card = _card()
    rows = cs.SsliRows(
        [],
        {},
        {
            "sets": ["cal.jsonl"],
            "corpus": "work/ssli-corpus-x",
            "questions": 18,
            "distractors": 28,
            "used": 16,
            "refused_seen_gold": ["q7", "q9"],
        },
    )
    metrics = {
        "first_stage": {"ndcg@10": 0.5, "hit@1": 0.4, "distractor_first": 0.5, "queries": 16.0},
        "fused": {"ndcg@10": 0.8, "hit@1": 0.7, "distractor_first": 0.2, "queries": 16.0},
    }
    record_ssli(card, "modes", rows, 10, metrics)
    assert card["config"]["calibration_ssli"] == {"sets": ["cal.jsonl"], "weight": 10}
    assert card["data"]["calibration_ssli"]["used"] == 16
    assert card["dev"]["calibration_ssli"]["modes"] == metrics
    text = render_dev_section(card)
    assert "| fused, calibration SSLI questions | 0.800 | 0.700 |" in text
    assert "16 calibration SSLI questions (x10) from cal.jsonl" in text
    assert "2 refused" in text and "fused 0.200" in text
    record_ssli(card, "modes", None, 0, None)
    assert "calibration_ssli" not in card["config"]
    assert "calibration_ssli" not in card["data"] and "calibration_ssli" not in card["dev"]


def render_dev_section(card: dict) -> str:
    from sciera.artifacts.card import _ssli_rows

    return "\n".join(_ssli_rows(card))


def test_a_card_without_ssli_renders_no_ssli_rows():
    assert render_dev_section(_card()) == ""


def test_a_missing_set_is_refused_before_anything_is_computed(tmp_path):
    from sciera.settings import load_settings
    from sciera.train.recalibrate import RecalibrationJob, recalibrate

    model = tmp_path / "m"
    model.mkdir()
    card = {
        "kind": "cross-encoder reranker",
        "data": {"corpus": "c", "queries": "q", "qrels": "r"},
        "config": {
            "retriever": "bm25",
            "depth": 10,
            "dev_fraction": 0.1,
            "seed": 0,
            "calibration_ssli": {"sets": [str(tmp_path / "gone.jsonl")], "weight": 10},
        },
        "splits": {"excluded": []},
    }
    (model / "sciera-card.json").write_text(json.dumps(card))
    settings = load_settings(home=str(tmp_path / "home"))
    with pytest.raises(ScieraError, match=r"gone\.jsonl: no such SSLI set; the card's"):
        recalibrate(str(model), settings)
    with pytest.raises(ScieraError, match=r"nope\.jsonl: no such SSLI set \(--calibration"):
        recalibrate(
            str(model),
            settings,
            job=RecalibrationJob(calibration_ssli=[str(tmp_path / "nope.jsonl")]),
        )
    with pytest.raises(ScieraError, match="weight must be 0 or more"):
        recalibrate(str(model), settings, job=RecalibrationJob(calibration_ssli_weight=-1))
    assert not (tmp_path / "home" / "work").exists()  # refused before any work folder
