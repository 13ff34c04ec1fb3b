"""Calibration questions: where they come from, what they change (the calibrators only, never
a training run's key) and how a card records them."""

from __future__ import annotations

import json

import numpy as np
import pytest

from sciera.artifacts.files import CALIBRATION_QUESTIONS_FILE
from sciera.train import calibration_questions as cq
from sciera.train.cross_encoder_run import calibrate_on_dev
from sciera.train.data import TrainQuery
from sciera.train.lineage import spec_from_card
from sciera.train.prepare import DataSpec, run_key
from sciera.train.splits import SplitGuard


def test_sources_are_held_out_dev_gold_first_never_training_gold_forbidden_or_judged():
    guard = SplitGuard(doc_ids={"d3", "x3"}, judged_docs={"d4", "x4"})
    corpus = ["d1", "d2", "d3", "d4", "d5", "x1", "x2", "x3", "x4", "x5"]
    dev_gold = {"d1", "d2", "d3", "d4", "d5", "d6"}  # d6: not in this (smaller) corpus
    train_gold = {"d2", "x2"}

    def pick(n, seed=0):
        return cq.pick_sources(
            dev_gold, train_gold, guard.allowed_docs, guard.judged_docs, n, seed, corpus
        )

    assert sorted(pick(2)) == ["d1#0", "d5#0"]  # the dev gold ones first
    everything = pick(10)
    assert sorted(everything[:2]) == ["d1#0", "d5#0"]
    assert sorted(everything[2:]) == ["x1#0", "x5#0"]
    assert pick(3) == pick(3) and len(pick(1)) == 1
    assert {tuple(pick(4, seed)) for seed in range(8)} != {tuple(pick(4))}  # seeded


def test_calibration_questions_never_change_a_training_runs_key():
    base = DataSpec("corpus", "queries.jsonl", "qrels/train.tsv")
    asked = DataSpec("corpus", "queries.jsonl", "qrels/train.tsv", calibration_questions=80)
    assert run_key({"epochs": 1}, asked) == run_key({"epochs": 1}, base)
    with pytest.raises(ValueError, match="calibration questions"):
        DataSpec("corpus", "queries.jsonl", "qrels/train.tsv", calibration_questions=-1)


def _records(prefix: str, n: int, gold_logit: float, rng) -> tuple[list, list]:
    """``n`` queries of 10 candidates; the gold one is first-stage rank 1 with ``gold_logit``,
    the negatives' logits around -6."""
    recs, logits = [], []
    for i in range(n):
        cands = tuple((f"{prefix}{i}-{j}#0", 1.0 - 0.05 * j) for j in range(10))
        recs.append(
            TrainQuery(f"{prefix}{i}", "q", (cands[0][0],), cands, frozenset({f"{prefix}{i}-0"}))
        )
        logits.append(np.array([gold_logit, *rng.normal(-6.0, 1.0, 9)]))
    return recs, logits


def test_question_rows_raise_p_where_questions_score_lower_than_claims():
    """Claims' gold passages score logit 4, questions' only 0: a calibrator fitted on the
    claims alone gives a question's gold passage a lower P than one rescaled on the
    questions too; the questions' own metrics are reported apart from dev's."""
    rng = np.random.default_rng(0)
    dev, dev_logits = _records("c", 60, 4.0, rng)
    dev_logits[0][0] = -2.0  # one claim whose gold scores low: the map is not a step
    questions, q_logits = _records("q", 60, 0.0, rng)
    alone = calibrate_on_dev(dev, dev_logits, "m")
    both = calibrate_on_dev(dev, dev_logits, "m", questions, q_logits)
    assert alone.questions is None and set(both.questions) == {
        "first_stage",
        "ce",
        "calibrated",
        "fused",
    }
    assert both.questions["calibrated"]["hit@1"] == 1.0 and "ece" in both.questions["fused"]
    assert both.modes["ce"] == alone.modes["ce"]  # dev metrics stay on dev
    x = np.array([[0.0]])
    p_alone = alone.calibrators["calibrated"].predict_matrix(x)[0]
    p_both = both.calibrators["calibrated"].predict_matrix(x)[0]
    assert p_both > p_alone + 0.1
    fused = both.calibrators["fused"].notes
    assert fused["fitted_on"] == "dev split" and fused["rescaled"]["a"] > 0
    assert fused["rescaled_on"] == "dev split + 60 calibration questions"
    assert "rescaled_on" not in alone.calibrators["fused"].notes
    # the questions move the probabilities, not the order the dev claims chose
    for mode in ("calibrated", "fused"):
        drop = {"ece"}
        same = {k: v for k, v in both.modes[mode].items() if k not in drop}
        assert same == {k: v for k, v in alone.modes[mode].items() if k not in drop}


def test_recalibration_reuses_the_number_a_card_records():
    card = {
        "data": {"corpus": "c", "queries": "q", "qrels": "r"},
        "config": {"retriever": "bm25", "depth": 10, "dev_fraction": 0.1, "seed": 0},
        "splits": {"excluded": [{"kind": "qrels", "path": "test.tsv"}]},
    }
    assert spec_from_card(card).calibration_questions == 0  # a card from before the option
    card["config"]["calibration_questions"] = 80
    spec = spec_from_card(card)
    assert spec.calibration_questions == 80 and spec.exclude_qrels == ("test.tsv",)


def test_the_card_says_how_many_questions_and_from_where():
    from sciera.artifacts.card import _calibration_questions

    data = {
        "calibration_questions": {
            "passages": 90,
            "from_dev_gold": 33,
            "queries": 88,
            "kept": 70,
            "llm": "llamacpp:qwen",
            "source": cq.SOURCE,
            "keep_top": 3,
        }
    }
    (line,) = _calibration_questions(data)
    assert "70 kept of 88 written by `llamacpp:qwen` for 90 held-out abstracts" in line
    assert "33 of them dev gold" in line
    assert "top 3" in line and _calibration_questions({}) == []


def test_calibration_styles_are_checked_and_never_change_a_training_runs_key():
    base = DataSpec("corpus", "queries.jsonl", "qrels/train.tsv")
    assert base.calibration_styles == ("question",)
    both = DataSpec(
        "corpus", "q", "r", calibration_questions=80, calibration_styles=("question", "yesno")
    )
    assert run_key({"epochs": 1}, both) == run_key({"epochs": 1}, DataSpec("corpus", "q", "r"))
    for bad in (("question", "question"), (), ("statement",)):
        with pytest.raises(ValueError, match="calibration styles"):
            DataSpec("corpus", "q", "r", calibration_styles=bad)
    # the question style keeps the ids calibration questions had before styles could mix
    assert cq.query_id("syn-abc", "question") == "cal-syn-abc"
    assert cq.query_id("syn-abc", "yesno") == "cal-yesno-syn-abc"


def test_recalibration_reuses_the_styles_a_card_records():
    card = {
        "data": {"corpus": "c", "queries": "q", "qrels": "r"},
        "config": {"retriever": "bm25", "depth": 10, "dev_fraction": 0.1, "seed": 0},
        "splits": {"excluded": []},
    }
    assert spec_from_card(card).calibration_styles == ("question",)
    card["config"]["calibration_styles"] = ["question", "yesno"]
    assert spec_from_card(card).calibration_styles == ("question", "yesno")


def test_the_card_names_mixed_styles():
    from sciera.artifacts.card import _calibration_questions

    section = {
        "passages": 150,
        "queries": 296,
        "kept": 280,
        "llm": "llamacpp:qwen",
        "source": cq.SOURCE,
        "keep_top": 3,
        "style": "question+yesno",
    }
    (line,) = _calibration_questions({"calibration_questions": section})
    assert "280 kept of 296 written" in line and "for 150 held-out abstracts" in line
    assert line.endswith("one question per abstract in each style: question, yesno")
    (single,) = _calibration_questions({"calibration_questions": {**section, "style": "question"}})
    assert "each style" not in single


def test_each_style_reports_progress_as_a_step_of_its_own():
    """A progress line of a finished step is never written again, so the second style's
    questions must not report under the first's name."""
    import io

    from sciera.progress import LineProgress

    out = io.StringIO()
    lines = LineProgress(out, every=0.0)
    for style in ("question", "yesno"):
        report = cq.styled(lines, style)
        for done in (1, 2):
            report("synthetic queries", done, 2)
    assert "calibration questions (question): 2/2" in out.getvalue()
    assert "calibration questions (yesno): 2/2" in out.getvalue()
    assert cq.styled(None, "yesno") is None


def _log(tmp_path, name, lines):
    work = tmp_path / name
    work.mkdir()
    (work / cq.CACHE).write_text("".join(json.dumps(x) + "\n" for x in lines))
    return work


def test_the_model_folder_carries_its_question_log_and_a_recalibration_starts_from_it(tmp_path):
    from sciera.train.recalibrate import seed_questions

    rows = [{"key": "k1", "passage_id": "d1#0", "query": "What is x?", "rank": 1}]
    model = tmp_path / "m"
    model.mkdir()
    card = {"data": {"calibration_questions": {"kept": 1}}}
    first = cq.bundle(model, _log(tmp_path, "run", rows), card)
    assert first == model / CALIBRATION_QUESTIONS_FILE
    again = cq.bundle(model, tmp_path / "run", card)  # byte-stable: the same log, the same file
    assert again.read_bytes() == first.read_bytes()
    assert cq.bundle(model, tmp_path, card) is None  # no log in that folder
    fresh = tmp_path / "recal"
    fresh.mkdir()
    seed_questions(model, fresh)  # no <model>.work: the folder's own log
    assert [json.loads(x) for x in (fresh / cq.CACHE).read_text().splitlines()] == rows
    # a work folder's own log is never overwritten; the training run's log comes first
    (fresh / cq.CACHE).write_text("")
    assert not cq.unbundle(model, fresh) and (fresh / cq.CACHE).read_text() == ""
    own = tmp_path / "m.work"
    own.mkdir()
    (own / cq.CACHE).write_text('{"key": "k2"}\n')
    other = tmp_path / "recal2"
    other.mkdir()
    seed_questions(model, other)
    assert (other / cq.CACHE).read_text() == '{"key": "k2"}\n'


def test_the_log_changes_no_model_identity(tmp_path):
    from sciera.artifacts.manifest import folder_digest

    model = tmp_path / "m"
    model.mkdir()
    (model / "model.safetensors").write_bytes(b"w")
    before = folder_digest(model)
    card = {"data": {"calibration_questions": {"kept": 1}}}
    assert cq.bundle(model, _log(tmp_path, "run", [{"key": "k"}]), card) is not None
    assert folder_digest(model) == before
    (model / "sciera-calibrator.json").write_text("{}")
    assert folder_digest(model) != before


def test_install_bundles_the_log_only_for_a_model_calibrated_on_questions(tmp_path, monkeypatch):
    from sciera.artifacts import card as card_mod
    from sciera.train.prepare import install

    monkeypatch.setattr(card_mod, "write_card", lambda d, c: (d / "card.json").write_text("{}"))
    work = _log(tmp_path, "run", [{"key": "k"}])
    with_q, without_q = tmp_path / "a", tmp_path / "b"
    for folder, data in ((with_q, {"calibration_questions": {"kept": 1}}), (without_q, {})):
        install(folder, work, {"data": data}, lambda f: (f / "w").write_text("w"))
    assert (with_q / CALIBRATION_QUESTIONS_FILE).is_file() and not (
        without_q / CALIBRATION_QUESTIONS_FILE
    ).exists()
    assert (with_q / "w").is_file() and (with_q / "card.json").is_file()
