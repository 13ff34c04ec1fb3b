from __future__ import annotations

from sciera.generate.citations import cite_all, resolve_citations
from sciera.types import Evidence, Passage

EV = [Evidence(Passage(f"d{i}#0", f"d{i}", 0, f"T{i}", "x"), 1.0) for i in (1, 2, 3)]


def test_markers_map_to_passage_ids_and_dangling_are_removed():
    got = resolve_citations("A holds [2]. B holds [1, 7]. C holds [9]. D [Passage 3][2].", EV)
    assert got.text == "A holds [2]. B holds [1]. C holds. D [3] [2]."
    assert [(c.marker, c.passage_id, c.title) for c in got.citations] == [
        (2, "d2#0", "T2"),
        (1, "d1#0", "T1"),
        (3, "d3#0", "T3"),
    ]
    assert got.dangling == (7, 9)
    assert got.uncited_sentences == 1  # "C holds."


def test_ranges_and_no_evidence():
    assert resolve_citations("All [1-3].", EV).text == "All [1, 2, 3]."
    got = resolve_citations("Claim [1].", [])
    assert got.text == "Claim." and got.citations == () and got.dangling == (1,)


def test_cite_all():
    assert [c.marker for c in cite_all(EV)] == [1, 2, 3]
