"""The ``underspecified`` question rule: topic words, document counts, the verdict, and
``specificity.json`` (written by ``sciera dataset check``, read by ``specific_only``)."""

from __future__ import annotations

import json
from types import SimpleNamespace

import pytest

from sciera.datasets.ssli.specificity import (
    SPECIFICITY_FILE,
    TopicIndex,
    check_set,
    check_specific,
    question_texts,
    specific_questions,
    specificity,
    topic_words,
)
from sciera.errors import InputError

# 40 abstracts: 30 meta-analyses on different subjects, 10 on aspirin, 2 of them on
# colorectal adenomas
DOCS = [
    (f"m{i}", f"A meta-analysis of trials on compound{i} and blood pressure.") for i in range(30)
]
DOCS += [(f"a{i}", f"Aspirin lowered platelet aggregation in cohort{i}.") for i in range(8)]
DOCS += [
    ("c1", "Aspirin prevented colorectal adenomas in a randomized trial."),
    ("c2", "Daily aspirin and the recurrence of colorectal adenomas."),
]


@pytest.fixture(scope="module")
def index() -> TopicIndex:
    return TopicIndex(DOCS)


def test_topic_words_drop_words_that_shape_a_question() -> None:
    assert topic_words("What was the result of the meta-analysis?") == ["metaanalysi"]
    assert topic_words("What is the significance of the findings?") == []
    assert topic_words("What is the effect of aspirin on colorectal adenomas?") == [
        "aspirin",
        "colorect",
        "adenoma",
    ]


def test_documents_containing_every_topic_word(index: TopicIndex) -> None:
    assert index.documents == 40
    assert index.matching(["aspirin"]) == 10
    assert index.matching(["aspirin", "colorect", "adenoma"]) == 2
    assert index.matching(["aspirin", "unseen"]) == 0
    assert index.matching([]) == 40
    # passages of one document count once
    assert (
        TopicIndex([("d", "aspirin"), ("d", "aspirin again"), ("e", "x")]).matching(["aspirin"])
        == 1
    )


def test_a_question_naming_no_subject_is_underspecified(index: TopicIndex) -> None:
    # limit max(5, 0.005 * 40) = 5 documents
    vague = check_specific("What was the result of the meta-analysis?", index)
    assert vague is not None and vague.reason == "underspecified"
    assert "30 of 40 documents" in vague.detail
    empty = check_specific("What is the significance of the findings?", index)
    assert empty is not None and "no word names" in empty.detail
    assert check_specific("What is the effect of aspirin on colorectal adenomas?", index) is None
    # aspirin alone: 10 documents > 5
    assert check_specific("What is the role of aspirin?", index) is not None
    # a larger share lets it through: 0.3 * 40 = 12 >= 10
    assert check_specific("What is the role of aspirin?", index, max_share=0.3) is None
    spec = specificity("What is the role of aspirin?", index, max_share=0.3)
    assert (spec.words, spec.documents, spec.limit, spec.specific) == (("aspirin",), 10, 12, True)


def _inst(qid: str, setting: str, question: str) -> SimpleNamespace:
    return SimpleNamespace(id=f"{qid}/{setting}", setting=setting, question=question)


def test_specificity_file_round_trip(index: TopicIndex, tmp_path) -> None:
    instances = [
        _inst("q1", "base", "What was the result of the meta-analysis?"),
        _inst("q1", "ssli", "What was the result of the meta-analysis?"),
        _inst("q2", "base", "What is the effect of aspirin on colorectal adenomas?"),
    ]
    assert list(question_texts(instances)) == ["q1", "q2"]
    data = check_set(instances, index, tmp_path, corpus="c")
    assert (data["specific"], data["underspecified"], data["limit"]) == (1, 1, 5)
    stored = json.loads((tmp_path / SPECIFICITY_FILE).read_text())
    assert stored["questions"]["q1"] == {
        "question": "What was the result of the meta-analysis?",
        "topic_words": ["metaanalysi"],
        "documents": 30,
        "specific": False,
    }
    assert specific_questions(tmp_path) == {"q2"}
    assert specific_questions(tmp_path / "instances.jsonl") == {"q2"}


def test_missing_specificity_file_names_the_command(tmp_path) -> None:
    with pytest.raises(InputError, match="sciera dataset check"):
        specific_questions(tmp_path)
    (tmp_path / SPECIFICITY_FILE).write_text("[]")
    with pytest.raises(InputError, match="not a specificity file"):
        specific_questions(tmp_path)
