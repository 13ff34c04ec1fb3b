"""Rows of ssli_discrimination are reused only for the pool they judged."""

from __future__ import annotations

from types import SimpleNamespace

from sciera.types import Passage

SCRIPT = "ssli_discrimination"


def _ds(question: str, distractor_text: str) -> SimpleNamespace:
    gold = Passage("d1#0", "d1", 0, "T", "gold text")
    other = Passage("d2#0", "d2", 0, "T", "not judged")
    fake = Passage("ssli:q:1", "ssli:q", 0, "", distractor_text)
    return SimpleNamespace(
        queries={"q": question},
        qrels={"q": {"d1#0": 1}},
        distractors={"q": {"ssli:q:1"}},
        candidates={"q": [gold, other, fake]},
    )


def test_only_gold_and_distractors_are_judged(bench):
    ids = [p.passage_id for p in bench.judged_passages(_ds("Q?", "x"), "q")]
    assert ids == ["d1#0", "ssli:q:1"]


def test_pool_key_changes_with_the_question_or_a_distractor(bench):
    key = bench.pool_key(_ds("Q?", "a distractor"), "q")
    assert key == bench.pool_key(_ds("Q?", "a distractor"), "q")
    assert key != bench.pool_key(_ds("Another Q?", "a distractor"), "q")
    assert key != bench.pool_key(_ds("Q?", "another distractor"), "q")
