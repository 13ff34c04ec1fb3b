"""The combined verdict: its LLM is built at the first call, not when the verify stage is
built (a claim no abstract passes never loads it), and a combiner fitted on another LLM
is named once in a warning (scripted LLM, a stand-in trained verdict, no model)."""

from __future__ import annotations

import numpy as np
import pytest

from fakes import ScriptedLLM
from sciera.llm.metered import LazyLLM
from sciera.verify import llm_verdict
from sciera.verify.base import VerdictInput
from sciera.verify.calibration import LogisticCombiner
from sciera.verify.llm_verdict import CombinedVerdict, LLMVerdict


class Flat:
    name = "flat"

    def predict_many(self, claim, inputs):
        return [(1 / 3, 1 / 3, 1 / 3)] * len(inputs)


def test_the_llm_loads_at_the_first_call_and_a_foreign_llm_is_named_once(monkeypatch):
    built = []

    def build() -> ScriptedLLM:
        built.append(1)
        return ScriptedLLM(default_probs={"support": 0.1, "contradict": 0.8, "neither": 0.1})

    identity = (np.eye(3), np.eye(3))
    combiner = LogisticCombiner(
        tuple(tuple(row) for row in np.hstack(identity)), (0.0, 0.0, 0.0), ("trained", "llm")
    )
    verdict = CombinedVerdict(Flat(), LLMVerdict(LazyLLM(build)), combiner, "other-llm@abc")
    assert built == []  # building the verdict model loads no LLM
    assert verdict.predict_many("A claim.", []) == [] and built == []
    warned: list[str] = []  # the module's logger (some tests reconfigure logging)
    monkeypatch.setattr(llm_verdict.logger, "warning", lambda msg, *a: warned.append(msg % a))
    (p,) = verdict.predict_many("A claim.", [VerdictInput(("It rose.",))])
    verdict.predict_many("A claim.", [VerdictInput(("It fell.",))])
    assert built == [1] and max(range(3), key=lambda i: p[i]) == 1
    assert len(warned) == 1 and "other-llm@abc" in warned[0] and "fitted on" in warned[0]


def test_the_combined_verdicts_card_states_its_own_gate():
    trained = Flat()
    trained.card = {  # type: ignore[attr-defined]
        "policy": {"min_rationale": 0.5, "min_relevance": 0.5, "strong": 0.35},
        "combiner": {"policy": {"min_relevance": 0.6, "relevance_weight": 0.4}},
    }
    identity = LogisticCombiner(((1.0,) * 6,) * 3, (0.0, 0.0, 0.0), ("trained", "llm"))
    verdict = CombinedVerdict(trained, Flat(), identity)
    assert verdict.card["policy"] == {
        "min_rationale": 0.5,
        "min_relevance": 0.6,
        "relevance_weight": 0.4,
        "strong": 0.35,
    }
    trained.card = {"policy": {"min_relevance": 0.5}}  # type: ignore[attr-defined]
    assert verdict.card["policy"] == {"min_relevance": 0.5}  # no combined gate: the trained one


class ByClaim:
    """A stand-in LLM verdict: "support" for the claim it was written for, recorded."""

    name = "llm"

    def __init__(self, supported: str) -> None:
        self.supported, self.asked = supported, []

    def predict_many(self, claim, inputs):
        self.asked.append(claim)
        p = (0.7, 0.2, 0.1) if claim == self.supported else (0.2, 0.1, 0.7)
        return [p] * len(inputs)


def test_the_negated_claim_is_asked_and_its_support_read_as_contradiction():
    from sciera.verify.llm_verdict import NegatedLLMVerdict

    llm = ByClaim("Aspirin increases the risk of colorectal cancer.")
    negated = NegatedLLMVerdict(llm)
    item = VerdictInput(("Aspirin users had more cancers.",))
    (p,) = negated.predict_many("Aspirin reduces the risk of colorectal cancer.", [item])
    assert llm.asked == ["Aspirin increases the risk of colorectal cancer."]
    assert p == (0.2, 0.7, 0.1)  # support of the negation is contradiction of the claim
    # a question, and a claim no rule negates, ask nothing and carry no information
    assert negated.predict_many("Does aspirin reduce cancer?", [item]) == [(1 / 3,) * 3]
    assert negated.predict_many("Vitamin D.", [item, item]) == [(1 / 3,) * 3] * 2
    assert len(llm.asked) == 1


def test_a_combiner_reads_the_inputs_it_names():
    claim = "Aspirin reduces the risk of colorectal cancer."
    llm = ByClaim("Aspirin increases the risk of colorectal cancer.")
    zeros, eye = np.zeros((3, 3)), np.eye(3)
    names = ("trained", "llm", "llm_negated")
    negated_only = LogisticCombiner(
        tuple(tuple(row) for row in np.hstack((zeros, zeros, eye * 5))), (0.0,) * 3, names
    )
    verdict = CombinedVerdict(Flat(), llm, {"claim": negated_only, "question": negated_only})
    (p,) = verdict.predict_many(claim, [VerdictInput(("Aspirin users had more cancers.",))])
    assert max(range(3), key=lambda i: p[i]) == 1  # CONTRADICT, from the negated claim alone
    assert llm.asked == [claim, "Aspirin increases the risk of colorectal cancer."]
    two = LogisticCombiner(((1.0,) * 6,) * 3, (0.0,) * 3, ("trained", "llm"))
    llm.asked.clear()
    CombinedVerdict(Flat(), llm, two).predict_many(claim, [VerdictInput(("x",))])
    assert llm.asked == [claim]  # a two-input combiner never asks the negation
    foreign = LogisticCombiner(((1.0,) * 6,) * 3, (0.0,) * 3, ("trained", "oracle"))
    with pytest.raises(ValueError, match=r"reads oracle, which .* knows trained, llm, llm_negated"):
        CombinedVerdict(Flat(), llm, foreign)


class Recorded:
    """A stand-in verdict that records every call (claim, the inputs' first sentences) and
    gives each abstract its own probabilities."""

    def __init__(self, name: str, log: list) -> None:
        self.name, self.log = name, log

    def predict_many(self, claim, inputs):
        self.log.append((self.name, claim, [i.sentences[0] for i in inputs]))
        return [(0.1 + 0.1 * len(i.sentences[0]) % 0.5, 0.2, 0.3) for i in inputs]


def test_the_llm_reads_each_abstract_for_the_claim_then_its_negation():
    claim, negation = "Aspirin reduces cancer.", "Aspirin increases cancer."
    log: list = []
    trained, llm = Recorded("trained", log), ByClaim(negation)
    names = ("trained", "llm", "llm_negated")
    w = np.random.default_rng(0).normal(size=(3, 9)) / 3
    combiner = LogisticCombiner(tuple(map(tuple, w)), (0.1, 0.0, -0.1), names)
    verdict = CombinedVerdict(trained, llm, {"claim": combiner, "question": combiner})
    items = [VerdictInput((s,)) for s in ("One.", "Second one.", "Third.")]
    got = verdict.predict_many(claim, items)
    # the trained model reads every abstract at once; the LLM abstract by abstract, the
    # claim and its negation in turn (the negation's prompt shares the evidence before it)
    assert log == [("trained", claim, ["One.", "Second one.", "Third."])]
    assert llm.asked == [claim, negation] * 3
    # the same probabilities as reading every abstract input by input
    read = [np.array(verdict.inputs[n].predict_many(claim, items)) for n in names]
    np.testing.assert_allclose(np.array(got), combiner(*read))
