"""Contextual calibration of yes/no decisions: the math, and the generator using it."""

from __future__ import annotations

import pytest

from fakes import ScriptedLLM
from sciera.generate.base import exact_answer
from sciera.generate.llm import LLMGenerator
from sciera.generate.prior import CONTENT_FREE, MIN_PRIOR, apply_prior, average_prior
from sciera.types import Evidence, Passage

EV = (Evidence(Passage("d1#0", "d1", 0, "", "Drug X lowered blood pressure by 2 mmHg."), 0.9),)
Q = "Does drug X lower blood pressure?"
OPTIONS = ["yes", "no", "maybe"]


def test_average_prior_renormalizes_the_mean():
    prior = average_prior([{"yes": 0.8, "no": 0.2}, {"yes": 0.4, "no": 0.4}], ["yes", "no"])
    assert prior == pytest.approx({"yes": 0.6 / 0.9, "no": 0.3 / 0.9})
    assert average_prior([{"yes": 0.0}], ["yes", "no"]) == {"yes": 0.5, "no": 0.5}
    with pytest.raises(ValueError):
        average_prior([], ["yes"])


def test_apply_prior_removes_a_yes_bias():
    out = apply_prior({"yes": 0.5, "no": 0.2, "maybe": 0.3}, {"yes": 0.7, "no": 0.1, "maybe": 0.2})
    assert max(out, key=out.get) == "no"
    assert sum(out.values()) == pytest.approx(1.0)
    # a uniform prior changes nothing; a zero prior is floored, not divided by
    flat = apply_prior({"yes": 0.6, "no": 0.4}, {"yes": 0.5, "no": 0.5})
    assert flat == pytest.approx({"yes": 0.6, "no": 0.4})
    floored = apply_prior({"yes": 0.5, "no": 0.5}, {"yes": 1.0, "no": 0.0})
    assert floored["no"] == pytest.approx((0.5 / MIN_PRIOR) / (0.5 + 0.5 / MIN_PRIOR))
    assert apply_prior({"yes": 0.0, "no": 0.0}, {"yes": 0.5, "no": 0.5}) == {"yes": 0.0, "no": 0.0}


def _biased_llm() -> ScriptedLLM:
    return (
        ScriptedLLM()
        .on(lambda p: Q not in p, probs={"yes": 0.7, "no": 0.1, "maybe": 0.2})  # content-free
        .on("Answer with exactly one word", probs={"yes": 0.5, "no": 0.2, "maybe": 0.3})
    )


def test_generator_divides_by_the_content_free_prior_computed_once():
    llm = _biased_llm()
    gen = LLMGenerator(llm, allow_maybe=True, explain_yesno=False, yesno_prior="content_free")
    a = gen.answer(Q, EV)
    assert exact_answer(a) == ("no",)
    assert a.trace["prior"] == pytest.approx({"yes": 0.7, "no": 0.1, "maybe": 0.2})
    assert a.trace["probs_raw"] == pytest.approx({"yes": 0.5, "no": 0.2, "maybe": 0.3})
    assert a.trace["probs"]["no"] > a.trace["probs"]["maybe"] > a.trace["probs"]["yes"]
    free = [c.prompt for c in llm.calls_to("choice_logprobs") if Q not in c.prompt]
    assert len(free) == len(CONTENT_FREE)
    assert '<passage id="1">\nN/A\n</passage>' in free[0] and "Question: N/A" in free[0]
    gen.answer(Q, EV)  # the prior is reused: one more call, not four
    assert len(llm.calls_to("choice_logprobs")) == len(CONTENT_FREE) + 2


def test_without_the_prior_the_raw_decision_stands():
    a = LLMGenerator(_biased_llm(), allow_maybe=True, explain_yesno=False).answer(Q, EV)
    assert exact_answer(a) == ("yes",) and "prior" not in a.trace


def test_unknown_prior_mode_is_rejected():
    with pytest.raises(ValueError, match="yesno_prior"):
        LLMGenerator(_biased_llm(), yesno_prior="platt")
