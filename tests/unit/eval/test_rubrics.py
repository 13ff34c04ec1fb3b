"""`sciera eval rubrics build`: grounded + parametric items, vacuous and near-duplicate
items removed, typed, the first `keep` kept, one resumable line per question."""

from __future__ import annotations

import json

import numpy as np
import pytest

from fakes import ScriptedLLM
from sciera.datasets.pubmedqa import load_pubmedqa
from sciera.eval.judges.rubric import load_rubrics
from sciera.eval.rubrics import RubricSpec, build_rubrics, grounding, is_vacuous

DATA = {
    "1": {
        "QUESTION": "Does vitamin D reduce fractures?",
        "CONTEXTS": ["Vitamin D did not reduce fractures in 2,000 adults."],
        "LONG_ANSWER": "Supplementation did not lower fracture risk.",
        "final_decision": "no",
    },
    "2": {
        "QUESTION": "Is drug B safe?",
        "CONTEXTS": ["Drug B caused liver injury in 3 of 40 patients."],
        "final_decision": "no",
    },
}
VOCAB: list[str] = []


def bag_of_words(texts):
    """Embedding by word counts: items with the same words are duplicates."""
    rows = []
    for t in texts:
        words = t.lower().replace(".", "").split()
        for w in words:
            if w not in VOCAB:
                VOCAB.append(w)
        rows.append([words.count(w) for w in VOCAB] + [0] * 200)
    width = max(len(r) for r in rows)
    return np.array([r + [0] * (width - len(r)) for r in rows], dtype=float)


def items(*pairs):
    return {"items": [{"text": t, "type": k} for t, k in pairs]}


def llm() -> ScriptedLLM:
    grounded = items(
        ("States that supplementation did not reduce fracture risk", "finding"),
        ("Mentions the 2,000 adults studied in the trial", "method"),
        ("Is clear and concise", "other"),  # vacuous
    )
    parametric = items(
        ("States that supplementation did not reduce fracture risk", "finding"),  # duplicate
        ("Explains how vitamin D acts on bone mineral density", "mechanism"),
        ("Compares effects with calcium given alone", "Comparison!"),  # unknown type
    )
    s = ScriptedLLM(model_id="writer")
    s.on(lambda p: "<source>" in p and "Does vitamin D" in p, [json.dumps(grounded)])
    s.on("Does vitamin D", [json.dumps(parametric)])
    s.on(
        "Is drug B safe",
        [json.dumps(items(("Reports liver injury in 3 of 40 patients", "finding")))],
    )
    return s


@pytest.fixture
def data(tmp_path):
    path = tmp_path / "pqal.json"
    path.write_text(json.dumps(DATA))
    return load_pubmedqa(path)


def test_grounding_is_the_long_answer_and_the_abstract_not_the_decision(data):
    text = grounding(data, "1")
    assert text.startswith("Supplementation did not lower") and "2,000 adults" in text
    assert grounding(data, "2") == "Drug B caused liver injury in 3 of 40 patients."


def test_vacuous_items_are_about_form_or_too_short():
    assert is_vacuous("Is clear and concise") and is_vacuous("Mentions fractures")
    assert not is_vacuous("States that supplementation did not reduce fracture risk")


def test_a_rubric_per_question_deduplicated_typed_and_resumable(tmp_path, data):
    out = tmp_path / "rubrics.jsonl"
    writer = llm()
    stats = build_rubrics(data, writer, bag_of_words, out, RubricSpec(keep=3))
    rows = [json.loads(line) for line in out.read_text().splitlines()]
    first = rows[0]
    assert [(i["source"], i["type"]) for i in first["items"]] == [
        ("grounded", "finding"),
        ("grounded", "method"),
        ("parametric", "mechanism"),
    ]
    assert first["removed"] == {"vacuous": 1, "duplicate": 1, "beyond_keep": 1}
    assert first["written"] == 6 and first["model_id"] == "writer"
    assert stats["questions"] == 2 and stats["items"] == 4
    assert stats["by_source"] == {"grounded": 3, "parametric": 1}
    assert load_rubrics(out)["is drug b safe?"][0].type == "finding"  # the judge reads it
    again = llm()
    build_rubrics(data, again, bag_of_words, out, RubricSpec(keep=3))
    assert again.calls == [] and len(out.read_text().splitlines()) == 2


def test_an_unparseable_reply_is_recorded_and_leaves_the_other_source(tmp_path, data):
    s = ScriptedLLM(model_id="w").on(lambda p: "<source>" in p, ["not json"])
    s.on("Write up to", [json.dumps(items(("Explains how drug B harms the liver", "mechanism")))])
    build_rubrics(data, s, bag_of_words, tmp_path / "r.jsonl")
    row = json.loads((tmp_path / "r.jsonl").read_text().splitlines()[0])
    assert row["errors"] and row["errors"][0].startswith("grounded:")
    assert [i["source"] for i in row["items"]] == ["parametric"]
