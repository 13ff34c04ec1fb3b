"""SSLI distractors as training negatives: loaded per SSLI-setting question, carried by
every group of that question, and an evaluation set (its abstracts excluded) refused."""

from __future__ import annotations

import json
import random

import pytest

from sciera.train import ssli_negatives
from sciera.train.ce_fit import make_groups
from sciera.train.data import TrainQuery
from sciera.train.splits import SplitGuard, SplitViolation, _norm


def _instance(qid: str, setting: str, gold: str, distractors: list[str]) -> dict:
    cands = [
        {"passage_id": f"{gold}#0", "text": "gold", "is_distractor": False, "distractor_type": ""}
    ]
    cands += [
        {"passage_id": f"ssli:{qid}:{i}", "text": t, "is_distractor": True, "distractor_type": "x"}
        for i, t in enumerate(distractors, 1)
    ]
    return {
        "id": f"{qid}/{setting}",
        "question": f"question {qid}?",
        "answer": "a",
        "gold_passage_ids": [f"{gold}#0"],
        "setting": setting,
        "candidates": cands,
    }


def _write(path, rows) -> None:
    path.write_text("".join(json.dumps(r) + "\n" for r in rows))


def test_load_keeps_ssli_questions_with_distractors(tmp_path):
    path = tmp_path / "instances.jsonl"
    _write(
        path,
        [
            _instance("q1", "base", "d1", []),
            _instance("q1", "ssli", "d1", ["looks relevant", "also close"]),
            _instance("q2", "ssli", "d2", []),  # no distractor: nothing to learn from
        ],
    )
    got = ssli_negatives.load([path], SplitGuard())
    assert got.queries == {"ssli:q1": "question q1?"}
    assert got.qrels == {"ssli:q1": {"d1": 1}}
    assert got.hard == {"ssli:q1": ("ssli:q1:1", "ssli:q1:2")}
    assert got.texts["ssli:q1:2"] == "also close"
    assert got.sources == [{"path": str(path), "questions": 1, "distractors": 2}]


def test_an_evaluation_set_is_refused_naming_the_instance(tmp_path):
    path = tmp_path / "instances.jsonl"
    _write(path, [_instance("q9", "ssli", "d9", ["close"])])
    with pytest.raises(SplitViolation, match=r"q9.*d9"):
        ssli_negatives.load([path], SplitGuard(doc_ids={"d9"}))
    with pytest.raises(SplitViolation):
        ssli_negatives.load([path], SplitGuard(query_texts={_norm("question q9?")}))


def test_hard_negatives_lead_every_group():
    rec = TrainQuery(
        "ssli:q1",
        "question",
        ("d1#0",),
        (("n1#0", 3.0), ("n2#0", 2.0), ("n3#0", 1.0)),
        frozenset({"d1"}),
        hard=("ssli:q1:1",),
    )
    for seed in range(5):
        (group,) = make_groups([rec], 3, random.Random(seed))
        pos, *negs = group[1]
        assert pos == "d1#0" and negs[0] == "ssli:q1:1" and len(negs) == 3
        assert set(negs[1:]) <= {"n1#0", "n2#0", "n3#0"}
    lonely = TrainQuery("s", "q", ("d#0",), (), frozenset({"d"}), hard=("h1", "h2"))
    (group,) = make_groups([lonely], 3, random.Random(0))
    assert group[1][:3] == ["d#0", "h1", "h2"] and group[1][3] in {"h1", "h2"}


def test_calibration_questions_stay_off_the_abstracts_of_a_models_ssli_negatives(tmp_path):
    """`train recalibrate` bans what training banned: the gold abstracts of the SSLI sets the
    card lists (training counts their questions as training queries)."""
    from types import SimpleNamespace

    from sciera.train.lineage import trained_beyond_labels

    path = tmp_path / "instances.jsonl"
    _write(path, [_instance("q1", "ssli", "d1", ["close"]), _instance("q2", "ssli", "d2", [])])
    card = {
        "data": {
            "corpus": "c",
            "queries": "q",
            "qrels": "r",
            "ssli_negatives": [
                {"path": str(path), "questions": 1, "distractors": 1},
                {"left_out_dev_gold_abstract": 0},
            ],
        },
        "config": {"retriever": "hybrid", "depth": 30, "dev_fraction": 0.12, "seed": 0},
        "splits": {"excluded": []},
    }
    data = SimpleNamespace(dev=[SimpleNamespace(gold_docs=("d9",))], guard=SplitGuard())
    assert trained_beyond_labels([card], data) == ["d1"]
    card["data"].pop("ssli_negatives")
    assert trained_beyond_labels([card], data) == []
