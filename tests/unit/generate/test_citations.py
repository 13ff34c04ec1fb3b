from __future__ import annotations

from sciera.generate.citations import cite_all, cite_stating, resolve_citations, stating
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


def _said(*texts: str) -> list[Evidence]:
    return [Evidence(Passage(f"s{i}#0", f"s{i}", 0, "", t), 0.1) for i, t in enumerate(texts, 1)]


def test_stating_finds_the_answer_verbatim_case_spacing_and_unicode_forms_aside():
    ev = _said(
        "Cells were kept at 30\u00b0C for  24 HR in PBS.",
        "Plates were coated at 1\u22362,000 with 5 mg/L; see Table\u00a02.",
        "The 1240 isolates were typed.",
    )
    assert stating("24 hr", ev) == (1,)
    assert stating("30\u00b0c", ev) == (1,)
    assert stating("1\u22362,000", ev) == (2,)
    assert stating("table 2", ev) == (2,)  # NBSP folded to a space
    assert stating("24 hours", ev) == ()  # a paraphrase is not a quote
    assert stating("124", ev) == ()  # not inside a longer number
    assert stating(" . ", ev) == ()


def test_cite_stating_adds_the_stating_records_after_the_given_ones():
    ev = _said("albendazole cures it", "ivermectin too", "albendazole again")
    first = resolve_citations("See [2].", ev).citations
    got = cite_stating(first, ["albendazole", "ivermectin"], ev)
    assert [c.marker for c in got] == [2, 1, 3]
