from __future__ import annotations

from sciera.evidence.attribute import attribute, best_overlap, content_words, named_passages
from sciera.types import Passage, ScoredPassage


def test_named_passages_forms():
    assert named_passages("as shown [1, 3] and in Passage 2", 5) == [0, 2, 1]
    assert named_passages("ranges [2-4]", 5) == [1, 2, 3]
    assert named_passages("out of range [9]", 3) == []


def test_best_overlap_prefers_shared_content_words_then_rank():
    vocab = [content_words("mitochondria remodel leaves"), content_words("leaves fall in autumn")]
    assert best_overlap("Mitochondria remodel the leaves.", vocab) == 0
    assert best_overlap("Leaves!", vocab) == 0  # tie: the better-ranked passage
    assert best_overlap("Quasars shine.", vocab) is None


def test_attribute_groups_sentences_per_passage_in_rank_order():
    p = [Passage(f"d{i}#0", f"d{i}", 0, "", t) for i, t in enumerate(["alpha beta", "gamma delta"])]
    items = [ScoredPassage(x, 1.0, i + 1) for i, x in enumerate(p)]
    got = attribute("Gamma rises [2]. Alpha falls. Both [1][2] matter. Omega.", items)
    assert [e.passage.passage_id for e in got.evidence] == ["d0#0", "d1#0"]
    assert got.evidence[0].summary == "Alpha falls. Both matter."
    assert got.evidence[1].summary == "Gamma rises. Both matter."
    assert got.unsupported == ("Omega.",)
