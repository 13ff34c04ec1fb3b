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
    def key(question, distractor):
        return bench.pool_key(question, bench.judged_passages(_ds(question, distractor), "q"))

    assert key("Q?", "a distractor") == key("Q?", "a distractor")
    assert key("Q?", "a distractor") != key("Another Q?", "a distractor")
    assert key("Q?", "a distractor") != key("Q?", "another distractor")
