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
        # a yes/no clause after a topic (PubMedQA's and BioASQ's title-style questions)
        ("Pertrochanteric fractures: is there an advantage to an intramedullary nail?", "yesno"),
        ("Juvenile ankylosing spondylitis--is it the same disease as adult AS?", "yesno"),
        ("Human papillomavirus and pterygium. Is the virus a risk factor?", "yesno"),
        ("In patients with diabetes, does metformin lower mortality?", "yesno"),
        # ... but not a wh-question, nor a topic without an auxiliary-led clause
        ("What is the role of p53, and is it mutated in most tumours?", "ideal"),
        ("BRCA1: which pathways does it act on?", "ideal"),
        ("Aripiprazole: a new risk factor for pathological gambling?", "ideal"),
        ("Aspirin, is it safe", "yesno"),  # no "?": a statement, as before
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
