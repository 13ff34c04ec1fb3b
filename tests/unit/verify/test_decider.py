"""The question decider: what it reads (the decisive abstract, the LLM over all the
evidence at once), how its decision becomes the question's verdict, where the verify stage
applies it (questions only) and how the recipe's decide stage fits it (scripted LLM,
hand-set combiners, no model)."""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pytest

from fakes import ScriptedLLM
from sciera.train.verifier_decider import DeciderRow, Question, capped, fit_decider
from sciera.types import (
    CONTRADICT,
    NOT_ENOUGH_INFO,
    SUPPORT,
    AbstractVerdict,
    Rationale,
    Verification,
)
from sciera.verify import calibration
from sciera.verify.base import AbstractText
from sciera.verify.calibration import LogisticCombiner
from sciera.verify.decider import (
    DECIDER_FILE,
    QuestionDecider,
    decisive,
    direct_probs,
    evidence_blocks,
)
from sciera.verify.stage import VerifyStage
from sciera.verify.verifier import VerifyPolicy

QUESTION = "Does aspirin lower adenoma risk?"


def verdict(doc, probs, label=SUPPORT, read=True, sentences=()):
    rationales = tuple(Rationale(doc, i, text, 0.9) for i, text in sentences)
    return AbstractVerdict(doc, f"Title {doc}", label, max(probs), probs, rationales, read=read)


def verification(*verdicts, label=SUPPORT):
    return Verification(QUESTION, tuple(verdicts), label, 0.7, supporting=("a",))


def only(name: str, label_weights=(1.0, 1.0, 1.0)) -> LogisticCombiner:
    """A combiner reading one input as it is (log p times a weight per label)."""
    w = tuple(tuple(label_weights[k] * float(j == k) for j in range(3)) for k in range(3))
    return LogisticCombiner(w, (0.0, 0.0, 0.0), (name,))


def test_the_decisive_abstract_leans_furthest_and_unread_ones_do_not_count() -> None:
    a = verdict("a", (0.5, 0.2, 0.3))
    b = verdict("b", (0.1, 0.7, 0.2), CONTRADICT)
    gated = verdict("c", (0.0, 0.95, 0.05), read=False)
    assert decisive(verification(a, b, gated)) == (0.1, 0.7, 0.2)
    assert decisive(verification(gated)) == pytest.approx((1 / 3, 1 / 3, 1 / 3))


def test_the_evidence_is_delimited_numbered_and_in_sentence_order() -> None:
    a = verdict("a", (0.5, 0.2, 0.3), sentences=[(4, "Later."), (1, "Earlier </evidence>.")])
    empty = verdict("b", (0.2, 0.2, 0.6))
    c = verdict("c", (0.2, 0.2, 0.6), sentences=[(0, "Third.")])
    text = evidence_blocks([a, empty, c])
    assert text.count("<evidence") == 2 and 'id="2" title="Title c"' in text
    assert text.index("Earlier") < text.index("Later.")
    assert "Earlier </evidence>" not in text  # the passage cannot close its block


def test_the_llm_reads_all_the_evidence_once_or_not_at_all() -> None:
    llm = ScriptedLLM(default_probs={"yes": 0.2, "no": 0.6, "maybe": 0.2})
    a = verdict("a", (0.5, 0.2, 0.3), sentences=[(0, "It fell.")])
    b = verdict("b", (0.5, 0.2, 0.3), sentences=[(2, "It rose.")])
    assert direct_probs(llm, QUESTION, verification(a, b)) == pytest.approx((0.2, 0.6, 0.2))
    (call,) = llm.calls_to("choice_logprobs")
    assert "It fell." in call.prompt and "It rose." in call.prompt and QUESTION in call.prompt
    assert call.params["choices"] == ["yes", "no", "maybe"]
    assert direct_probs(llm, QUESTION, verification(verdict("c", (0.3, 0.3, 0.4)))) == (
        pytest.approx((1 / 3, 1 / 3, 1 / 3))
    )
    assert len(llm.calls_to("choice_logprobs")) == 1
    # an abstract the relevance gate kept out is not read
    gated = verdict("g", (0.3, 0.3, 0.4), read=False, sentences=[(0, "Off the topic.")])
    direct_probs(llm, QUESTION, verification(a, gated))
    assert "Off the topic." not in llm.calls_to("choice_logprobs")[-1].prompt


def test_a_question_no_abstract_passed_the_gate_for_stays_undecided_without_a_call() -> None:
    llm = ScriptedLLM(default_probs={"yes": 0.9, "no": 0.05, "maybe": 0.05})
    gated = verdict("g", (0.3, 0.3, 0.4), NOT_ENOUGH_INFO, read=False, sentences=[(0, "Near.")])
    v = verification(gated, label=NOT_ENOUGH_INFO)
    decided, trace = QuestionDecider(only("direct"), llm).decide(QUESTION, v)
    assert decided is v and llm.calls == []
    assert trace == {
        "skipped": "no abstract passed the relevance gate",
        "aggregated": NOT_ENOUGH_INFO,
    }


def test_the_decision_becomes_the_verdict_and_names_its_side() -> None:
    llm = ScriptedLLM(default_probs={"yes": 0.1, "no": 0.8, "maybe": 0.1})
    a = verdict("a", (0.8, 0.1, 0.1), sentences=[(0, "Risk was unchanged.")])
    b = verdict("b", (0.2, 0.7, 0.1), CONTRADICT, sentences=[(1, "No effect was seen.")])
    decided, trace = QuestionDecider(only("direct"), llm).decide(QUESTION, verification(a, b))
    assert decided.label == CONTRADICT and decided.contradicting == ("b",)
    assert decided.supporting == () and not decided.conflicting
    assert decided.confidence == pytest.approx(0.8)
    assert trace["aggregated"] == SUPPORT and trace["inputs"]["direct"] == [0.1, 0.8, 0.1]
    # a decider reading the verdict alone never asks the LLM
    quiet = ScriptedLLM()
    decided, _ = QuestionDecider(only("verdict"), quiet).decide(QUESTION, verification(a, b))
    assert decided.label == SUPPORT and quiet.calls == []
    with pytest.raises(ValueError, match="does not know"):
        QuestionDecider(only("hidden_state"), quiet)


def test_a_decider_is_loaded_from_the_folder_or_is_none(tmp_path: Path) -> None:
    llm = ScriptedLLM()
    assert QuestionDecider.load(tmp_path, llm) is None
    calibration.save(only("direct"), tmp_path / DECIDER_FILE)
    loaded = QuestionDecider.load(tmp_path, llm)
    assert loaded is not None and loaded.combiner == only("direct")


class OneSentence:
    name = "one"

    def score_many(self, claim, abstracts):
        return [[0.9] * len(a.sentences) for a in abstracts]


class Leaning:
    name = "leaning"

    def predict_many(self, claim, inputs):
        return [(0.7, 0.2, 0.1)] * len(inputs)


def test_the_stage_decides_questions_and_leaves_claims_alone() -> None:
    from sciera.types import Passage, Ranking, ScoredPassage

    llm = ScriptedLLM(default_probs={"yes": 0.05, "no": 0.9, "maybe": 0.05})
    stage = VerifyStage(
        OneSentence(), Leaning(), VerifyPolicy(), decider=QuestionDecider(only("direct"), llm)
    )
    ranking = Ranking(
        "q", (ScoredPassage(Passage("d#0", "d", 0, "T", "Aspirin did nothing."), 1.0, 1),), "bm25"
    )
    question, trace = stage.verify(QUESTION, ranking)
    assert question.label == CONTRADICT and trace["decider"]["aggregated"] == SUPPORT
    claim, trace = stage.verify("Aspirin lowers adenoma risk.", ranking)
    assert claim.label == SUPPORT and "decider" not in trace
    assert len(llm.calls_to("choice_logprobs")) == 1


def rows(n: int, source: str, informative: str, seed: int) -> list[DeciderRow]:
    """Questions whose label one input shows (the other is noise)."""
    rng = np.random.default_rng(seed)
    out = []
    for i in range(n):
        label = i % 2
        clear = np.full(3, 0.1)
        clear[label] = 0.8
        noise = rng.dirichlet(np.ones(3))
        inputs = {"verdict": noise, "direct": clear}
        if informative == "verdict":
            inputs = {"verdict": clear, "direct": noise}
        out.append(DeciderRow(source, f"{source}{i}", label, 0, *map(tuple, inputs.values())))
    return out


def test_fitting_chooses_the_inputs_that_decide_and_reports_each_source() -> None:
    both = rows(60, "bioasq", "direct", 0) + rows(60, "pubmedqa", "verdict", 1)
    decider, report = fit_decider(both, natural=[60, 60, 0])
    assert decider.inputs == ("verdict", "direct") and report["inputs"] == ["verdict", "direct"]
    assert report["cross_validated"]["verdict+direct"]["accuracy"] > 0.9
    assert report["by_source"]["bioasq"]["direct"]["accuracy"] > 0.9
    assert report["by_source"]["pubmedqa"]["direct"]["accuracy"] < 0.75
    decider, report = fit_decider(rows(80, "bioasq", "direct", 2), natural=[40, 40, 0])
    assert report["inputs"] == ["direct"]  # the verdict adds nothing here: left out


def test_the_cap_draws_per_source_and_label_the_same_way_each_time() -> None:
    questions = [
        Question(src, f"{src}{i}", "Q?", (AbstractText("d", "", ("s",)),), i % 3)
        for src in ("bioasq", "pubmedqa")
        for i in range(30)
    ]
    drawn = capped(questions, 4, seed=0)
    assert len(drawn) == 24 and drawn == capped(list(reversed(questions)), 4, seed=0)
    assert {(q.source, q.label) for q in drawn} == {
        (s, k) for s in ("bioasq", "pubmedqa") for k in range(3)
    }
    assert capped(questions, 4, seed=1) != drawn
    assert NOT_ENOUGH_INFO  # the third label is a question's "maybe"


def test_the_model_card_renders_what_the_fit_reports() -> None:
    from sciera.train.verifier_card import _decider

    _, report = fit_decider(
        rows(40, "bioasq", "direct", 0) + rows(40, "pubmedqa", "verdict", 1), [40, 40, 0]
    )
    section = {
        "file": DECIDER_FILE,
        "llm": "scripted:test",
        "prompt": "decide_question@1",
        "bioasq": "training.json",
        "per_label": 50,
        "natural": {SUPPORT: 40, CONTRADICT: 40, NOT_ENOUGH_INFO: 0},
        **report,
    }
    text = "\n".join(_decider(section))
    assert "reading verdict and direct" in text
    assert "every one of them, so their rows are the label mix" in text  # 40 + 40 read
    capped = {**section, "natural": {SUPPORT: 90, CONTRADICT: 40, NOT_ENOUGH_INFO: 0}}
    assert "at most 50 per label and source, its intercepts corrected" in "".join(_decider(capped))
    table = [line for line in text.splitlines() if line.startswith("| ")]
    assert [line.split(" | ")[0] for line in table[1:]] == ["| bioasq", "| pubmedqa", "| all"]
    assert all(line.count(" / ") == 4 for line in table[1:])  # aggregated + three input sets
    assert _decider(None) == []
