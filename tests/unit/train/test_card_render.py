"""What a model card renders beyond the basics: extra negatives, a continued model's start."""

from __future__ import annotations


def test_the_card_lists_extra_negatives():
    from sciera.train.card import _extra_negatives

    data = {
        "ssli_negatives": [{"path": "set", "questions": 17, "distractors": 29}],
        "spliced_negatives": {"background": 3, "spliced": 2, "queries": 3},
    }
    lines = _extra_negatives(data)
    assert '"distractors": 29' in lines[0]
    assert lines[1].endswith("3 + 2 for 3 queries")
    assert _extra_negatives({}) == []


def test_the_card_of_a_continued_model_names_its_start_and_its_command():
    from sciera.train.card import _continued_from

    card = {"continued_from": {"name": "old", "what": "commit abc", "command": "sciera train x"}}
    lines = _continued_from(card)
    assert lines[0].startswith("Trained on from `old` (commit abc)")
    assert "sciera train x" in lines
    assert _continued_from({}) == []
