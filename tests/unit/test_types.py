import dataclasses

import pytest

from sciera.types import Document, Passage, Ranking


def _p(pid: str) -> Passage:
    doc, idx = pid.split("#")
    return Passage(pid, doc, int(idx), f"Title {doc}", f"text of {pid}")


def test_from_scores_sorts_ranks_and_breaks_ties_by_id():
    r = Ranking.from_scores("q", [(_p("b#0"), 1.0), (_p("a#0"), 1.0), (_p("c#0"), 2.0)], "t")
    assert r.passage_ids == ["c#0", "a#0", "b#0"]
    assert [it.rank for it in r] == [1, 2, 3]
    assert r.top(2).passage_ids == ["c#0", "a#0"]


def test_records_are_immutable_including_mappings():
    d = Document("d", "t", "x", {"year": 2020})
    with pytest.raises(dataclasses.FrozenInstanceError):
        d.title = "other"  # type: ignore[misc]
    with pytest.raises(TypeError):
        d.metadata["year"] = 1999  # type: ignore[index]


def test_contents_prepends_title():
    assert _p("a#0").contents == "Title a\ntext of a#0"
    assert Passage("x#0", "x", 0, "", "body").contents == "body"
