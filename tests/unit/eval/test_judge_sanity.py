"""The judge sanity set: corruptions of reference answers, each judge's accuracy on
them (pairwise in both orders, rubric coverage), resumable, shown beside the leaderboard."""

from __future__ import annotations

import json

import pytest

from fakes import ScriptedLLM
from sciera.datasets.pubmedqa import load_pubmedqa
from sciera.errors import ScieraError
from sciera.eval.corruptions import NEUTRAL, corrupt, key_sentence, negate
from sciera.eval.judges.pairwise import PairwiseJudge
from sciera.eval.judges.rubric import RubricCoverageJudge, RubricItem
from sciera.eval.sanity import run_sanity, sanity_pairs

REF = "Calcium was measured in 300 women. Vitamin D did not reduce fracture risk."
GROUND = "Vitamin D supplementation and fracture risk: no reduction in a trial."


def test_the_key_finding_is_the_sentence_closest_to_the_grounding():
    from sciera.eval.corruptions import sentences

    assert key_sentence(sentences(REF), GROUND) == 1


@pytest.mark.parametrize(
    ("kind", "expected"),
    [
        ("drop_finding", "Calcium was measured in 300 women."),
        (
            "negate_finding",
            "Calcium was measured in 300 women. Vitamin D did reduce fracture risk.",
        ),
        ("unrelated_citation", "Calcium was measured in 300 women. Metformin lowers glucose [1]."),
    ],
)
def test_corruptions_change_the_key_finding(kind, expected):
    assert corrupt(kind, REF, GROUND, "Metformin lowers glucose.") == expected


def test_padding_doubles_the_length_and_keeps_the_answer():
    padded = corrupt("padded", REF, GROUND, "")
    assert padded.startswith(REF) and len(padded.split()) >= 2 * len(REF.split())
    assert corrupt("drop_finding", "Only one finding here.", "finding", "") == NEUTRAL


@pytest.mark.parametrize(
    ("sentence", "flipped"),
    [
        ("Drug A is not associated with harm.", "Drug A is associated with harm."),
        ("Exercise increased bone density.", "Exercise reduced bone density."),
        ("Statins lower cholesterol.", "Statins increases cholesterol."),
        ("The test may be useful.", "The test may not be useful."),
        ("Outcomes varied.", None),
    ],
)
def test_negation_rules(sentence, flipped):
    assert negate(sentence) == flipped


DATA = {
    "1": {
        "QUESTION": "Does vitamin D reduce fractures?",
        "CONTEXTS": [GROUND],
        "LONG_ANSWER": REF,
        "final_decision": "no",
    },
    "2": {
        "QUESTION": "Is drug B safe?",
        "CONTEXTS": ["Drug B caused liver injury in 3 of 40 patients."],
        "LONG_ANSWER": "Drug B caused liver injury in some patients, so it is not safe.",
        "final_decision": "no",
    },
    "3": {"QUESTION": "Is C useful?", "CONTEXTS": ["C, unclear."], "final_decision": "maybe"},
}


@pytest.fixture
def data(tmp_path):
    path = tmp_path / "pqal.json"
    path.write_text(json.dumps(DATA))
    return load_pubmedqa(path)


def test_cases_come_from_questions_with_a_long_reference(data):
    pairs = sanity_pairs(data)
    assert {p["qid"] for p in pairs} == {"1", "2"}  # 3 has no LONG_ANSWER
    cited = next(p for p in pairs if p["qid"] == "1" and p["kind"] == "unrelated_citation")
    assert "liver injury" in cited["corrupted"] and cited["corrupted"].endswith("[1].")


def reference_lover() -> ScriptedLLM:
    """Prefers whichever answer is a reference; grades coverage 4 for references."""
    refs = [v["LONG_ANSWER"] for v in DATA.values() if "LONG_ANSWER" in v]

    llm = ScriptedLLM(model_id="judge")
    for r in refs:
        llm.on(lambda p, r=r: f"<answer_a>\n{r}\n</answer_a>" in p, probs={"A": 1.0})
        llm.on(lambda p, r=r: f"<answer_b>\n{r}\n</answer_b>" in p, probs={"B": 1.0})
        llm.on(lambda p, r=r: f"<answer>\n{r}\n</answer>" in p, probs={"4": 1.0})
    llm.on("Better answer", probs={"C": 1.0})
    llm.on("Coverage grade", probs={"4": 0.5, "0": 0.5})
    return llm


def test_a_judge_that_prefers_references_is_right_and_a_rerun_judges_nothing(tmp_path, data):
    rubrics = {
        "does vitamin d reduce fractures?": [RubricItem("x")],
        "is drug b safe?": [RubricItem("y")],
    }
    llm = reference_lover()
    summary = run_sanity(
        data,
        tmp_path / "s",
        pairwise=PairwiseJudge(llm),
        coverage=RubricCoverageJudge(llm, rubrics=rubrics),
    )
    pw, cov = summary["pairwise"], summary["rubric_coverage"]
    assert summary["complete"] and summary["questions"] == 2
    assert pw["harmful_accuracy"] == 1.0 and pw["harmful_n"] == 6
    # the rules match whole blocks, so the reference also beats its padded copy: right
    assert pw["by_kind"]["padded"] == {"n": 2.0, "accuracy": 1.0, "ties": 0.0}
    assert cov["harmful_accuracy"] == 1.0 and cov["by_kind"]["padded"]["accuracy"] == 1.0
    assert pw["position_bias"]["order_agreement"] == 1.0
    assert "| pairwise (judge) |" in (tmp_path / "s" / "sanity.md").read_text()
    # cost per judgment: 8 battles; coverage of 2 references and 8 corrupted answers
    assert pw["cost"]["timed_judgments"] == 8 and cov["cost"]["timed_judgments"] == 10
    battle_tokens = [len(c.prompt.split()) for c in llm.calls if "Better answer" in c.prompt]
    assert pw["cost"]["prompt_tokens_per_judgment"] == sum(battle_tokens) / 8
    table = (tmp_path / "s" / "sanity.md").read_text()
    assert "prompt tokens per judged answer (10 timed)" in table
    again = reference_lover()
    run_sanity(data, tmp_path / "s", pairwise=PairwiseJudge(again))
    assert again.calls == []


def test_a_first_position_judge_is_wrong_and_shows_its_bias(tmp_path, data):
    llm = ScriptedLLM(model_id="biased").on("Better answer", probs={"A": 1.0})
    summary = run_sanity(data, tmp_path / "s", pairwise=PairwiseJudge(llm))
    pw = summary["pairwise"]
    assert pw["harmful_accuracy"] == 0.0 and pw["position_bias"]["first_wins"] == 1.0
    assert pw["by_kind"]["padded"]["accuracy"] == 1.0  # a tie: not preferring the padding


def test_no_judge_or_no_reference_is_an_error(tmp_path, data):
    with pytest.raises(ScieraError, match="needs a judge"):
        run_sanity(data, tmp_path / "s")
    no_long = data.subset(["3"])
    with pytest.raises(ScieraError, match="no question has a long reference"):
        run_sanity(no_long, tmp_path / "s", pairwise=PairwiseJudge(ScriptedLLM()))
