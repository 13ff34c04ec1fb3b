"""The SSLI view: questions of an SSLI experiment, each gold passage and distractor with
every pipeline's score and rank, from the dataset and the run files."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from sciera.serve.errors import NotFound
from sciera.serve.experiments import Experiments
from sciera.serve.ssli_view import SSLIView


def _instance(qid: str, setting: str, distractor: bool) -> dict:
    cands = [
        {"passage_id": "g#0", "text": "gold text", "is_distractor": False, "distractor_type": ""},
        {"passage_id": "o#0", "text": "other", "is_distractor": False, "distractor_type": ""},
    ]
    if distractor:
        cands.append(
            {
                "passage_id": "d#0",
                "text": "fluent",
                "is_distractor": True,
                "distractor_type": "misleading",
            }
        )
    return {
        "id": f"{qid}/{setting}",
        "question": f"{qid}?",
        "answer": "a",
        "setting": setting,
        "gold_passage_ids": ["g#0"],
        "candidates": cands,
        "provenance": {},
    }


@pytest.fixture
def view(tmp_path: Path) -> SSLIView:
    data = tmp_path / "set"
    data.mkdir()
    rows = [_instance("q1", s, True) for s in ("base", "ssli")] + [_instance("q2", "ssli", False)]
    (data / "instances.jsonl").write_text("\n".join(json.dumps(r) for r in rows) + "\n")
    exp = tmp_path / "results" / "exp"
    manifest = {"experiment": {"name": "exp", "dataset": {"type": "ssli", "path": str(data)}}}
    for pipeline, scores in {"bm25": (0.2, 0.9, 0.5), "ce": (0.9, 0.1, 0.3)}.items():
        run = exp / "runs" / pipeline / "r0"
        run.mkdir(parents=True)
        lines = [
            f"q1/ssli Q0 {p} 0 {x} t" for p, x in zip(("g#0", "d#0", "o#0"), scores, strict=True)
        ]
        (run / "run.trec").write_text("\n".join(lines) + "\n")
    (exp / "manifest.json").write_text(json.dumps(manifest))
    other = tmp_path / "results" / "beir"
    other.mkdir()
    (other / "manifest.json").write_text(json.dumps({"experiment": {"dataset": {"type": "beir"}}}))
    return SSLIView(Experiments(tmp_path / "results"))


def test_questions_are_the_ssli_setting_ones_the_experiment_ran(view):
    (row,) = view.questions("exp")  # q1/base is the other setting; q2 was not run
    assert row["id"] == "q1/ssli" and row["distractors"] == 1
    assert row["gold_rank"] == {"bm25": 3, "ce": 1}


def test_question_puts_gold_and_distractors_side_by_side_with_each_rankers_scores(view):
    q = view.question("exp", "q1/ssli")
    assert q["pipelines"] == ["bm25", "ce"] and q["candidates"] == 3
    gold, dist = q["passages"]  # the unrelated candidate is left out
    assert (gold["role"], dist["role"], dist["distractor_type"]) == (
        "gold",
        "distractor",
        "misleading",
    )
    assert gold["scores"]["bm25"] == {"score": 0.2, "rank": 3}
    assert dist["scores"]["bm25"] == {"score": 0.9, "rank": 1}
    assert gold["scores"]["ce"]["rank"] == 1


def test_unknown_question_or_a_non_ssli_experiment_is_not_found(view):
    with pytest.raises(NotFound, match="no SSLI question"):
        view.question("exp", "q9/ssli")
    with pytest.raises(NotFound, match="not on an SSLI dataset"):
        view.questions("beir")
    with pytest.raises(NotFound):
        view.questions("../exp")


def test_a_packed_experiment_shows_the_same_scores_from_its_gzipped_log(view, tmp_path):
    # a committed results folder keeps runs/<p>/r0/results.jsonl.gz and drops run.trec
    from sciera.eval.resultlog import pack

    before = view.question("exp", "q1/ssli")
    for pipeline, scores in {"bm25": (0.2, 0.9, 0.5), "ce": (0.9, 0.1, 0.3)}.items():
        run = tmp_path / "results" / "exp" / "runs" / pipeline / "r0"
        first = [[p, x] for p, x in zip(("g#0", "d#0", "o#0"), scores, strict=True)]
        (run / "results.jsonl").write_text(json.dumps({"qid": "q1/ssli", "first": first}) + "\n")
        pack(run / "results.jsonl")
        (run / "run.trec").unlink()
    assert view.question("exp", "q1/ssli") == before
    assert view.questions("exp")[0]["gold_rank"] == {"bm25": 3, "ce": 1}
