from __future__ import annotations

import pytest

from sciera.generate.qtype import detect_question_type, normalize_type, resolve_question_type


@pytest.mark.parametrize(
    ("question", "kind"),
    [
        ("Do mitochondria play a role in remodelling lace plant leaves?", "yesno"),
        ("Is albendazole used to treat filariasis?", "yesno"),
        ("Albendazole is used to treat lymphatic filariasis.", "yesno"),  # a claim
        ("Which genes are associated with Cornelia de Lange syndrome?", "list"),
        ("List the symptoms of scurvy.", "list"),
        ("Which enzyme is deficient in Gaucher disease?", "factoid"),
        ("How many genes does E. coli have?", "factoid"),
        ("Who discovered penicillin?", "factoid"),
        ("What is the mechanism of action of abemaciclib?", "ideal"),
        ("How does autophagy affect aging?", "ideal"),
        ("Describe the role of p53.", "ideal"),
    ],
)
def test_detection(question, kind):
    assert detect_question_type(question).kind == kind


def test_given_type_wins_and_aliases():
    assert resolve_question_type("Is it?", "summary").kind == "ideal"
    assert resolve_question_type("Is it?", "auto").rule.startswith("starts with")
    assert resolve_question_type("Is it?", None).kind == "yesno"
    with pytest.raises(ValueError, match="unknown question type"):
        normalize_type("essay")
