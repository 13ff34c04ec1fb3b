"""The rubric coverage judge (ResearchQA): items graded 0-4 from grade probabilities,
length control, failures, its experiment options, and its columns and paired tests in
reports; the leaderboard's ensemble when runs carry coverage."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from test_runner_answers import PUBMEDQA, stage_registries  # noqa: F401 (a fixture)

from fakes import ScriptedLLM
from sciera.errors import ScieraError
from sciera.eval.compare import compare_pipelines
from sciera.eval.experiment import parse_experiment
from sciera.eval.judges.pairwise import PairwiseJudge
from sciera.eval.judges.rubric import RubricCoverageJudge, RubricItem, load_rubrics
from sciera.eval.leaderboard import build_leaderboard
from sciera.eval.report import write_report
from sciera.eval.runner import run_experiment
from sciera.eval.runstore import load_results

ITEMS = [
    RubricItem("States that A helps.", "finding", "grounded"),
    RubricItem("Mentions the dose.", "method", "parametric"),
]


def grader() -> ScriptedLLM:
    """Full coverage of an item whose key word the answer holds, else none."""
    llm = ScriptedLLM(model_id="grader")
    llm.on(lambda p: "helps." in p and "excellent" in p, probs={"4": 0.9, "3": 0.1})
    llm.on("Coverage grade", probs={"0": 0.5, "2": 0.5})
    return llm


def test_items_are_graded_by_expected_grade_and_summed_into_points():
    judge = RubricCoverageJudge(grader(), rubrics={"does a help?": ITEMS})
    s = judge.judge("Does  A help?", "", "excellent answer: A helps")
    first = (4 * 0.9 + 3 * 0.1) / 4
    assert s.score == pytest.approx((first + 0.25) / 2)
    assert s.details["points"] == pytest.approx(first + 0.25)
    assert s.details["full"] == 0.5 and s.details["items"] == 2
    assert s.details["type:finding"] == pytest.approx(first)
    assert s.details["type:method"] == 0.25
    assert s.details["words"] == 4 and s.details["cut"] == 0
    assert s.prompt_version == "judge_rubric@2" and s.model_id == "grader"


def test_answers_are_cut_to_the_word_budget_before_grading():
    llm = grader()
    judge = RubricCoverageJudge(llm, rubrics={"q?": ITEMS[:1]}, max_words=2)
    s = judge.judge("Q?", "", "poor start " + "excellent " * 300)
    assert "excellent" not in llm.calls[0].prompt.split("<answer>")[1]
    assert s.details["cut"] == 1 and s.details["words"] == 302


def test_items_of_one_answer_share_the_answer_as_a_prompt_prefix():
    """The question and answer precede the item, so the KV cache of the answer is
    reused by every item after the first."""
    llm = grader()
    RubricCoverageJudge(llm, rubrics={"q?": ITEMS}).judge("Q?", "", "a long answer " * 50)
    first, second = (c.prompt for c in llm.calls)
    differ = next(i for i, (a, b) in enumerate(zip(first, second, strict=False)) if a != b)
    shared = first[:differ]
    assert "</answer>" in shared
    assert ITEMS[0].text in first and ITEMS[0].text not in shared


def test_no_rubric_or_every_item_failing_is_a_failure_not_a_zero():
    judge = RubricCoverageJudge(grader(), rubrics={"q?": ITEMS})
    assert judge.judge("Other?", "", "x").failed
    broken = ScriptedLLM().on("Coverage grade", raises=TimeoutError("down"))
    s = RubricCoverageJudge(broken, rubrics={"q?": ITEMS}).judge("Q?", "", "x")
    assert s.failed and s.score is None and "down" in s.error
    half = ScriptedLLM().on("Mentions the dose", raises=TimeoutError("down"))
    half.on("Coverage grade", probs={"4": 1.0})
    s = RubricCoverageJudge(half, rubrics={"q?": ITEMS}).judge("Q?", "", "x")
    assert s.score == 1.0 and s.details["failed_items"] == 1 and "down" in s.error


def test_rubric_files_are_read_and_bad_lines_named(tmp_path):
    good = {"qid": "1", "question": "Q?", "items": [{"text": "t", "type": "finding"}]}
    path = tmp_path / "r.jsonl"
    path.write_text(json.dumps(good) + "\n" + json.dumps({"qid": "2"}) + "\n")
    with pytest.raises(ScieraError, match=r"r\.jsonl:2: items: not a rubric record"):
        load_rubrics(path)
    path.write_text(json.dumps(good) + "\n")
    assert load_rubrics(path) == {"q?": [RubricItem("t", "finding", "")]}


def write_rubrics(path: Path) -> Path:
    rows = [
        {"qid": q, "question": v["QUESTION"], "items": [{"text": f"{v['CONTEXTS'][0]}"}]}
        for q, v in PUBMEDQA.items()
    ]
    path.write_text("".join(json.dumps(r) + "\n" for r in rows))
    return path


def experiment(tmp_path: Path, judge: dict) -> dict:
    data = tmp_path / "pqal.json"
    data.write_text(json.dumps(PUBMEDQA))
    return {
        "name": "pqa",
        "dataset": {"type": "pubmedqa", "path": "pqal.json"},
        "metrics": ["f1"],
        "judges": [judge],
        "repeats": 1,
        "pipelines": [
            {"name": n, "retriever": "candidates", "generator": "echo"} for n in ("good", "bad")
        ],
    }


@pytest.mark.parametrize(
    ("judge", "message"),
    [
        ({"name": "rubric_coverage"}, "judges[0]: rubrics: required by the rubric_coverage judge"),
        ({"name": "lfs", "max_words": 100}, "max_words: the lfs judge takes no max_words"),
        ({"name": "rubric_coverage", "rubrics": "none.jsonl"}, "judges[0].rubrics: no such file"),
    ],
)
def test_judge_options_are_checked(tmp_path, judge, message, stage_registries):  # noqa: F811
    with pytest.raises(ScieraError, match=message.replace(".", r"\.").replace("[", r"\[")):
        parse_experiment(experiment(tmp_path, judge), "x.yaml", tmp_path)


def test_coverage_in_reports_paired_tests_and_the_ensemble(tmp_path, stage_registries):  # noqa: F811
    write_rubrics(tmp_path / "rubrics.jsonl")
    judge = {"name": "rubric_coverage", "rubrics": "rubrics.jsonl", "max_words": 50}
    exp = parse_experiment(experiment(tmp_path, judge), "x.yaml", tmp_path)
    built = []

    def factory(settings, seed):
        llm = ScriptedLLM(model_id="m").on("Answer", ["excellent", "poor"][len(built)] + " text")
        llm.on(lambda p: "<answer>\nexcellent" in p, probs={"4": 1.0})
        llm.on("Coverage grade", probs={"1": 1.0})
        built.append(llm)
        return llm

    out = tmp_path / "res"
    run_experiment(exp, out, llm_factory=factory)
    write_report(out, plots=False)
    rows = {
        r["pipeline"]: r["cells"]
        for r in json.loads((out / "report/table.json").read_text())["rows"]
    }
    assert rows["good"]["rubric_coverage"]["mean"] == 1.0
    assert rows["bad"]["rubric_coverage"]["mean"] == 0.25
    assert rows["good"]["rubric_coverage:full"]["mean"] == 1.0
    assert rows["bad"]["rubric_coverage:words"]["mean"] == 2.0
    # the judge's cost is its own: seconds and tokens per judged answer, not the pipeline's
    judged = rows["good"]["tok/q judge:rubric_coverage"]["mean"]
    assert judged > 0 and rows["good"]["s/q judge:rubric_coverage"]["mean"] >= 0
    recs = list(load_results(out).records["good"][0].values())

    def per_question(stage: str) -> float:
        rows_ = [r["cost"][stage] for r in recs]
        return sum(c["prompt_tokens"] + c["completion_tokens"] for c in rows_) / len(recs)

    assert judged == pytest.approx(per_question("judge:rubric_coverage"))
    assert rows["good"]["tok/q"]["mean"] == pytest.approx(per_question("generate"))
    test = {c.metric: c for c in compare_pipelines(load_results(out))}["rubric_coverage"]
    assert test.diff == -0.75 and test.test.n == 4
    # the direct judge sees ties only; the ensemble's coverage points decide
    tie_judge = ScriptedLLM(model_id="j").on("Better answer", probs={"C": 1.0})
    board = build_leaderboard([out], PairwiseJudge(tie_judge), tmp_path / "b", plots=False)
    assert {r.wins for r in board.ratings["direct"]} == {2.0}
    ensemble = board.ratings["ensemble"]
    assert [r.system for r in ensemble] == ["good", "bad"] and ensemble[0].wins == 4
