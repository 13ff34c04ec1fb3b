"""What a model card renders beyond the basics: extra negatives, a continued model's start."""

from __future__ import annotations


def test_the_card_lists_extra_negatives():
    from sciera.artifacts.card import _extra_negatives

    data = {
        "ssli_negatives": [{"path": "set", "questions": 17, "distractors": 29}],
        "spliced_negatives": {"background": 3, "spliced": 2, "queries": 3},
    }
    lines = _extra_negatives(data)
    assert '"distractors": 29' in lines[0]
    assert lines[1].endswith("3 + 2 for 3 queries")
    assert _extra_negatives({}) == []


def test_the_card_of_a_continued_model_names_its_start_and_its_command():
    from sciera.artifacts.card import _continued_from

    card = {"continued_from": {"name": "old", "what": "commit abc", "command": "sciera train x"}}
    lines = _continued_from(card)
    assert lines[0].startswith("Trained on from `old` (commit abc)")
    assert "sciera train x" in lines
    assert _continued_from({}) == []


def test_training_from_a_sciera_model_records_where_it_started(tmp_path):
    import json

    from sciera.train.prepare import continued_from

    first = tmp_path / "first"
    first.mkdir()
    card = {"name": "first", "kind": "cross-encoder reranker", "base": "minilm"}
    (first / "sciera-card.json").write_text(json.dumps({**card, "command": "sciera train a"}))
    got = continued_from(str(first))["continued_from"]
    assert got["name"] == "first" and got["command"] == "sciera train a"
    assert "from minilm" in got["what"] and "continued_from" not in got
    second = tmp_path / "second"
    second.mkdir()
    card2 = {**card, "name": "second", "command": "sciera train b", "continued_from": got}
    (second / "sciera-card.json").write_text(json.dumps(card2))
    assert continued_from(str(second))["continued_from"]["continued_from"] == got
    assert continued_from("minilm") == {} and continued_from(str(tmp_path)) == {}
