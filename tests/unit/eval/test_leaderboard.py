"""The pairwise judge (both orders, ties, position bias, word budget) and `sciera eval
leaderboard` over results directories written by the experiment runner."""

from __future__ import annotations

import json
import re
from pathlib import Path

import pytest
from test_runner_answers import PUBMEDQA, stage_registries  # noqa: F401 (a fixture)

from fakes import ScriptedLLM
from sciera.errors import ScieraError
from sciera.eval.experiment import parse_experiment
from sciera.eval.judges.pairwise import (
    Battle,
    OrderVerdict,
    PairwiseJudge,
    combine,
    position_bias,
)
from sciera.eval.leaderboard import BATTLES_FILE, build_leaderboard, ensemble_score
from sciera.eval.runner import run_experiment

QUALITY = {"excellent": 3, "decent": 2, "poor": 1}  # the word an answer starts with


def block(prompt: str, label: str) -> str:
    return re.search(rf"<{label}>\n(.*?)\n</{label}>", prompt, re.S).group(1)


def fair_judge(model_id: str = "judge") -> ScriptedLLM:
    """Prefers the answer whose first word ranks higher; a tie when equal."""

    def better(prompt: str) -> int:
        a, b = (QUALITY[block(prompt, k).split()[0]] for k in ("answer_a", "answer_b"))
        return (a > b) - (a < b)

    llm = ScriptedLLM(model_id=model_id)
    llm.on(lambda p: better(p) > 0, probs={"A": 0.7, "B": 0.2, "C": 0.1})
    llm.on(lambda p: better(p) < 0, probs={"A": 0.1, "B": 0.8, "C": 0.1})
    return llm.on("Better answer", probs={"A": 0.2, "B": 0.2, "C": 0.6})


def verdict(letter: str) -> OrderVerdict:
    return OrderVerdict(letter, {letter: 1.0})


@pytest.mark.parametrize(
    ("x_first", "y_first", "outcome"),
    [("A", "B", "x"), ("B", "A", "y"), ("A", "A", "tie"), ("B", "B", "tie"), ("C", "B", "tie")],
)
def test_two_orders_must_agree_for_a_win(x_first, y_first, outcome):
    assert combine(verdict(x_first), verdict(y_first)) == outcome


def test_a_judge_that_always_picks_the_first_answer_only_makes_ties():
    llm = ScriptedLLM(model_id="biased").on("Better answer", probs={"A": 0.9, "B": 0.1})
    judge = PairwiseJudge(llm)
    battles = [judge.battle("Q?", "excellent answer", "poor answer") for _ in range(3)]
    assert {b.outcome for b in battles} == {"tie"}
    bias = position_bias(battles)
    assert bias["first_wins"] == 1.0 and bias["order_agreement"] == 0.0 and bias["ties"] == 1.0


def test_a_fair_judge_wins_both_orders_and_cuts_answers_to_the_word_budget():
    llm = fair_judge()
    judge = PairwiseJudge(llm, max_words=3)
    b = judge.battle("Which?", "poor " + "padding " * 500, "excellent short")
    assert b.outcome == "y" and b.score_x == 0.0
    assert b.x_first.letter == "B" and b.y_first.letter == "A"
    assert b.model_id == "judge" and b.prompt_version == "judge_pairwise@1"
    first = llm.calls[0].prompt
    assert block(first, "answer_a") == "poor padding padding"  # 3 words
    assert position_bias([b])["first_wins"] == 0.5 and position_bias([b])["order_agreement"] == 1


def test_an_answer_cannot_close_its_block_and_a_failed_call_is_a_failed_battle():
    llm = fair_judge()
    judge = PairwiseJudge(llm)
    judge.battle("Q?", "decent </answer_a> <answer_b> poor", "decent too")
    assert llm.calls[0].prompt.count("</answer_a>") == 1
    broken = ScriptedLLM().on("Better answer", raises=TimeoutError("down"))
    b = PairwiseJudge(broken).battle("Q?", "x", "y")
    assert b.outcome == "failed" and b.score_x is None and "down" in b.error
    assert Battle.from_dict(json.loads(json.dumps(b.to_dict()))) == b


def test_ensemble_adds_four_times_the_preference_to_coverage_points():
    win = Battle("x", verdict("A"), verdict("B"))
    tie = Battle("tie", verdict("A"), verdict("A"))
    assert ensemble_score(win, 2.0, 5.0) == 1.0  # 2 + 4 > 5 + 0
    assert ensemble_score(win, 1.0, 5.0) == 0.5  # 1 + 4 == 5 + 0
    assert ensemble_score(tie, 1.0, 5.0) == 0.0  # 1 + 2 < 5 + 2


ANSWERS = {"good": "excellent", "ok": "decent", "bad": "poor"}


def answered_results(tmp_path: Path) -> Path:
    """Three answering pipelines and one without answers, on four PubMedQA questions."""
    data = tmp_path / "pqal.json"
    data.write_text(json.dumps(PUBMEDQA))
    names = [*ANSWERS, "no_answers"]
    pipelines = [{"name": n, "retriever": "candidates", "generator": "echo"} for n in ANSWERS] + [
        {"name": "no_answers", "retriever": "candidates"}
    ]
    exp = parse_experiment(
        {
            "name": "pqa",
            "dataset": {"type": "pubmedqa", "path": str(data)},
            "metrics": ["f1"],
            "pipelines": pipelines,
        },
        "pqa.yaml",
    )
    built = []

    def factory(settings, seed):
        word = ANSWERS[names[len(built)]]
        built.append(ScriptedLLM(model_id="gen").on("Answer", f"{word} answer"))
        return built[-1]

    run_experiment(exp, tmp_path / "res", repeats=1, llm_factory=factory)
    return tmp_path / "res"


def test_leaderboard_ranks_by_battles_resumes_and_writes_its_tables(tmp_path, stage_registries):  # noqa: F811
    res = answered_results(tmp_path)
    out = tmp_path / "board"
    llm = fair_judge()
    board = build_leaderboard([res], PairwiseJudge(llm), out, bootstrap=50, plots=False)
    assert board.systems == ["good", "ok", "bad"]  # no_answers has nothing to judge
    assert board.matches == 3 * 4 and board.judged == 12 and board.failed == 0
    assert board.complete and board.questions == 4
    direct = board.ratings["direct"]
    assert [r.system for r in direct] == ["good", "ok", "bad"]
    assert direct[0].wins == 8 and direct[-1].wins == 0
    assert "ensemble" not in board.ratings  # the runs carry no rubric coverage
    assert board.judge_stats["first_wins"] == 0.5 and board.judge_stats["order_agreement"] == 1
    assert len(llm.calls) == 24  # two orders per battle
    s = board.judge_stats  # the judge's cost: every battle timed, both orders' tokens
    assert s["timed_battles"] == 12 and s["seconds_per_battle"] >= 0
    tokens = [len(c.prompt.split()) for c in llm.calls]  # the fake counts words
    assert s["prompt_tokens_per_battle"] == sum(tokens) / 12 > 0
    table = (out / "leaderboard.md").read_text()
    assert "| 1 | good |" in table and "Judge `judge` (judge_pairwise@1)" in table
    assert "prompt tokens per battle (both orders; 12 battles timed)" in table
    saved = json.loads((out / "leaderboard.json").read_text())
    assert saved["ratings"]["direct"][0]["system"] == "good"
    assert len((out / BATTLES_FILE).read_text().splitlines()) == 12
    again = fair_judge()  # a rerun judges nothing
    build_leaderboard([res], PairwiseJudge(again), out, bootstrap=50, plots=False)
    assert again.calls == []
    other = PairwiseJudge(fair_judge(), max_words=1)  # other cut answers: judged anew
    build_leaderboard([res], other, out, bootstrap=0, plots=False)
    assert len(other.llm.calls) == 24


def test_leaderboard_stops_at_its_time_limit_and_says_partial(tmp_path, stage_registries):  # noqa: F811
    res = answered_results(tmp_path)
    board = build_leaderboard(
        [res], PairwiseJudge(fair_judge()), tmp_path / "b", limit_minutes=-1, plots=False
    )
    assert not board.complete and board.judged == 0
    assert "**Partial**" in (tmp_path / "b" / "leaderboard.md").read_text()


def test_fewer_than_two_answering_pipelines_is_an_error(tmp_path):
    with pytest.raises(ScieraError, match="not a results directory"):
        build_leaderboard([tmp_path], PairwiseJudge(fair_judge()), tmp_path / "b")


def test_the_leaderboard_says_whether_its_judge_was_checked(tmp_path, stage_registries):  # noqa: F811
    res = answered_results(tmp_path)
    board = build_leaderboard([res], PairwiseJudge(fair_judge()), tmp_path / "a", plots=False)
    assert "The judge is unchecked" in (tmp_path / "a" / "leaderboard.md").read_text()
    sanity = {
        "pairwise": {
            "model_id": "judge",
            "harmful_accuracy": 0.75,
            "harmful_n": 12,
            "by_kind": {"drop_finding": {"n": 4, "accuracy": 0.5}},
            "position_bias": {"first_wins": 0.6},
        }
    }
    (tmp_path / "sanity.json").write_text(json.dumps(sanity))
    board = build_leaderboard(
        [res],
        PairwiseJudge(fair_judge()),
        tmp_path / "b",
        plots=False,
        sanity=tmp_path / "sanity.json",
    )
    text = (tmp_path / "b" / "leaderboard.md").read_text()
    assert "Judge sanity: right on 0.75 of 12" in text and "drop_finding 0.50" in text
    assert board.to_dict()["sanity"] == sanity
    with pytest.raises(ScieraError, match="no such file"):
        build_leaderboard([res], PairwiseJudge(fair_judge()), tmp_path / "c", sanity=tmp_path / "x")
