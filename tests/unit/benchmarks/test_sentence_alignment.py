"""sentence_alignment.py: a corpus's stored sentences against SciFact's lists (two tiny
corpora ingested here, no model)."""

from __future__ import annotations

import json
from pathlib import Path

SCRIPT = "sentence_alignment"
# SciFact's lists: d1 two sentences, d2 three
GOLD = {
    "d1": ["It binds ATP.", "2,3-DPG does too."],
    "d2": ["Mice were fed.", "They grew.", "Rats did not."],
}


def _corpus(root: Path, texts: dict[str, str]) -> Path:
    from sciera.corpus import ingest

    root.mkdir()
    src = root / "corpus.jsonl"
    rows = [{"_id": d, "title": "", "text": t} for d, t in texts.items()]
    src.write_text("".join(json.dumps(r) + "\n" for r in rows), encoding="utf-8")
    ingest(src, root / "corpus", format="beir")
    return root / "corpus"


def test_boundaries_ignore_the_spaces_that_join_sentences(bench):
    assert bench._boundaries(["A b.", "C."]) == bench._boundaries(["A b.", " C."]) == {3}
    assert bench._boundaries(["One sentence."]) == set()


def test_a_corpus_is_scored_against_scifact_lists(bench, tmp_path):
    glued = _corpus(
        tmp_path / "a",
        {"d1": "It binds ATP.2,3-DPG does too.", "d2": "Mice were fed. They grew. Rats did not."},
    )
    merged = _corpus(
        tmp_path / "b",
        {
            "d1": "It binds ATP and 2,3-DPG does too.",
            "d2": "Mice were fed. They grew. Rats did not.",
        },
    )
    rationales = [("d1", 1), ("d2", 2)]
    a = bench.score(glued, GOLD, rationales)
    assert (a["same_sentence_list"], a["boundaries_missed"], a["boundaries_added"]) == (2, 0, 0)
    assert a["rationale_sentences_aligned"] == 2
    b = bench.score(merged, GOLD, rationales)
    assert (b["same_sentence_list"], b["boundaries_missed"]) == (1, 1)
    assert b["_aligned"] == [False, True]
