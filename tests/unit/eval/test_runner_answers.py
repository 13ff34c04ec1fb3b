"""Pipelines with evidence and generator stages, resolved through the stage registries,
and the LFS judge on their answers (registries stood in by a module of test doubles)."""

from __future__ import annotations

import json
import sys
import types
from pathlib import Path

import pytest
from test_runner import write_ssli

from fakes import ScriptedLLM
from sciera.eval.experiment import parse_experiment
from sciera.eval.report import write_report
from sciera.eval.runner import run_experiment
from sciera.evidence.base import EvidenceResult
from sciera.llm.base import Message
from sciera.types import Answer, Evidence


class _Double:
    def __init__(self, llm) -> None:
        self.llm = llm

    @classmethod
    def from_settings(cls, settings, llm=None):
        return cls(llm)


class TopOne(_Double):
    """Evidence: the best passage, summarized as its first word."""

    name = "top_one"

    def extract(self, question, ranking):
        top = ranking.items[0]
        ev = (Evidence(top.passage, top.score, summary=top.passage.text.split()[0]),)
        return EvidenceResult(ev, None, 1.0)


class Echo(_Double):
    """Generator: asks the LLM, which the script makes answer per question."""

    name = "echo"

    def answer(self, question, evidence, question_type=None, *, sufficient=None, verification=None):
        text = self.llm.complete([Message("user", f"Answer {question}")]).text
        return Answer(question, text, "factoid", evidence=tuple(evidence))


class Decide(_Double):
    """Yes/no/maybe generator: the LLM's reply is the exact answer ("refuse": none)."""

    name = "decide"

    def answer(self, question, evidence, question_type=None, *, sufficient=None, verification=None):
        label = self.llm.complete([Message("user", f"Decide {question}")]).text
        exact = () if label == "refuse" else (label,)
        text = f"{label.capitalize()}, says the abstract [1]."
        return Answer(question, text, "yesno", evidence=tuple(evidence), trace={"exact": exact})


@pytest.fixture
def stage_registries(monkeypatch):
    """The doubles registered by name in the real registries, as a backend would be."""
    from sciera.evidence.registry import EXTRACTORS
    from sciera.generate.registry import GENERATORS

    mod = types.ModuleType("answer_stage_doubles")
    mod.TopOne, mod.Echo, mod.Decide = TopOne, Echo, Decide
    monkeypatch.setitem(sys.modules, "answer_stage_doubles", mod)
    monkeypatch.setitem(EXTRACTORS, "top_one", "answer_stage_doubles:TopOne")
    monkeypatch.setitem(GENERATORS, "echo", "answer_stage_doubles:Echo")
    monkeypatch.setitem(GENERATORS, "decide", "answer_stage_doubles:Decide")


def scripted(settings, seed: int) -> ScriptedLLM:
    llm = ScriptedLLM(model_id=f"scripted#seed={seed}")
    llm.on("Answer question q1?", "answer q1")  # exact: f1 1
    llm.on("Answer question q2?", "answer")  # f1 = 2/3 vs "answer q2"
    llm.on("Answer question q3?", "nothing")  # f1 0
    llm.on("<candidate>\nnothing", raises=TimeoutError("judge down"))
    llm.on("<candidate>\nanswer q1", probs={"5": 1.0})
    llm.on("Grade (0-5)", probs={"2": 0.5, "4": 0.5})
    return llm


def test_answers_metrics_judge_and_failures(tmp_path: Path, stage_registries) -> None:
    data = write_ssli(tmp_path / "ssli.jsonl")
    exp = parse_experiment(
        {
            "name": "answers",
            "dataset": {"type": "ssli", "path": str(data)},
            "metrics": ["hit@1", "em", "f1", "cr"],
            "judges": [{"name": "lfs"}],
            "pipelines": [
                {
                    "name": "qa",
                    "retriever": "candidates",
                    "evidence": "top_one",
                    "generator": "echo",
                }
            ],
        },
        "answers.yaml",
    )
    assert exp.repeats_of(exp.pipelines[0]) == 3
    out = tmp_path / "res"
    run_experiment(exp, out, repeats=1, llm_factory=scripted)
    write_report(out, plots=False)
    rows = {
        r["setting"]: r["cells"]
        for r in json.loads((out / "report/table.json").read_text())["rows"]
    }
    base, ssli = rows["base"], rows["ssli"]
    assert base["em"]["mean"] == pytest.approx(0.5)
    assert base["f1"]["mean"] == pytest.approx((1 + 2 / 3) / 2)
    assert base["lfs"]["mean"] == pytest.approx((5 + 3) / 2) and base["lfs_failures"]["mean"] == 0
    assert "lfs" not in ssli and ssli["lfs_failures"]["mean"] == 1.0  # counted, not dropped
    # CR: whitespace tokens of the pool / tokens of the one-word summary (q1: 2 + 2 words)
    assert base["cr"]["mean"] == pytest.approx((4 / 1 + 6 / 1) / 2)
    assert base["tok/q"]["mean"] > 0
    answers = (out / "runs/qa/r0/answers.jsonl").read_text().splitlines()
    first = json.loads(answers[0])
    assert first["answer"]["text"] == "answer q1"
    assert first["judges"]["lfs"]["prompt_version"] == "judge_lfs@1"
    assert first["judges"]["lfs"]["model_id"] == "scripted#seed=0"


PUBMEDQA = {
    "1": {"QUESTION": "Does A help?", "CONTEXTS": ["A helps."], "final_decision": "yes"},
    "2": {"QUESTION": "Is B safe?", "CONTEXTS": ["B harms."], "final_decision": "no"},
    "3": {"QUESTION": "Is C useful?", "CONTEXTS": ["C, unclear."], "final_decision": "maybe"},
    "4": {"QUESTION": "Does D work?", "CONTEXTS": ["D works."], "final_decision": "yes"},
}


def test_pubmedqa_exact_answers_give_accuracy_and_macro_f1(tmp_path: Path, stage_registries):
    data = tmp_path / "pqal.json"
    data.write_text(json.dumps(PUBMEDQA))
    exp = parse_experiment(
        {
            "name": "pubmedqa",
            "dataset": {"type": "pubmedqa", "path": str(data)},
            "metrics": ["yesno_accuracy", "macro_f1"],
            "pipelines": [{"name": "qa", "retriever": "candidates", "generator": "decide"}],
        },
        "pubmedqa.yaml",
    )

    def deciding(settings, seed: int) -> ScriptedLLM:
        llm = ScriptedLLM(model_id=f"scripted#seed={seed}")
        llm.on("Decide Does A help?", "yes")  # right
        llm.on("Decide Is B safe?", "yes")  # wrong
        llm.on("Decide Is C useful?", "maybe")  # right
        llm.on("Decide Does D work?", "refuse")  # no label: wrong
        return llm

    out = tmp_path / "res"
    run_experiment(exp, out, repeats=1, llm_factory=deciding)
    logged = [json.loads(line) for line in (out / "runs/qa/r0/results.jsonl").open()]
    assert [r["answer"]["exact"] for r in logged] == [["yes"], ["yes"], ["maybe"], []]
    assert json.loads((out / "dataset.json").read_text())["labels"]["3"] == "maybe"
    write_report(out, plots=False)
    (row,) = json.loads((out / "report/table.json").read_text())["rows"]
    assert row["cells"]["yesno_accuracy"]["mean"] == pytest.approx(2 / 4)
    # yes: TP 1 (1), FP 1 (2), FN 1 (4) -> 1/2; no: TP 0 -> 0; maybe: TP 1 -> 1  => 1/2
    assert row["cells"]["macro_f1"]["mean"] == pytest.approx((1 / 2 + 0 + 1) / 3)
