"""The LLM generator through the ScriptedLLM: typed outputs, citations, refusal, degradation."""

from __future__ import annotations

import json

import pytest

from fakes import ScriptedLLM
from sciera.generate.base import Generator, exact_answer
from sciera.generate.llm import LLMGenerator, limit_words
from sciera.generate.prompts import EXTRACTIVE_STYLE
from sciera.generate.refusal import REFUSAL_TEXT
from sciera.types import Evidence, Passage

EV = (
    Evidence(Passage("d1#0", "d1", 0, "Filariasis", "Albendazole treats filariasis."), 0.9),
    Evidence(Passage("d2#0", "d2", 0, "Curcumin", "Curcumin is anti-inflammatory."), 0.85, "Cur."),
)
Q = "Is albendazole used to treat lymphatic filariasis?"


def test_yesno_decision_from_choice_probabilities_with_cited_explanation():
    llm = (
        ScriptedLLM()
        .on("Answer with exactly one word", probs={"yes": 0.6, "no": 0.2})
        .on("explain the answer", {"explanation": "Albendazole treats it [1] and more [4]."})
    )
    gen = LLMGenerator(llm)
    assert isinstance(gen, Generator)
    a = gen.answer(Q, EV)
    assert a.question_type == "yesno" and exact_answer(a) == ("yes",)
    assert a.text == "Yes. Albendazole treats it [1] and more."
    assert [c.passage_id for c in a.citations] == ["d1#0"]
    assert a.trace["dangling_citations"] == 1 and a.trace["dangling_markers"] == [4]
    assert a.trace["probs"] == pytest.approx({"yes": 0.75, "no": 0.25})
    assert llm.calls[0].params["choices"] == ["yes", "no"]
    assert not a.insufficient and a.evidence == EV
    prompt = llm.calls[0].prompt
    assert '<passage id="2">\nCurcumin\nCur.\n</passage>' in prompt  # summary keeps its title


def test_maybe_and_no_explanation_cites_all_evidence():
    llm = ScriptedLLM().on("one word", probs={"yes": 0.2, "no": 0.3, "maybe": 0.5})
    a = LLMGenerator(llm, allow_maybe=True, explain_yesno=False).answer(Q, EV)
    assert exact_answer(a) == ("maybe",) and a.text == "Maybe."
    assert "yes, no or maybe" in llm.calls[0].prompt
    assert [c.marker for c in a.citations] == [1, 2]
    assert len(llm.calls) == 1


def test_decision_only_without_a_verifier_writes_no_explanation():
    llm = ScriptedLLM().on("one word", probs={"yes": 0.3, "no": 0.7})
    a = LLMGenerator(llm, decision_only=True).answer(Q, EV)
    assert exact_answer(a) == ("no",) and a.text == "No."
    assert len(llm.calls) == 1 and "explain the answer" not in llm.calls[0].prompt


def test_unreadable_yesno_is_degraded():
    a = LLMGenerator(ScriptedLLM(default="banana")).answer(Q, EV)
    assert exact_answer(a) == () and a.citations == ()
    assert "no yes/no decision" in a.trace["degraded"] and a.text.startswith("No answer")


def test_factoid_up_to_five_ranked_entities():
    reply = {
        "answers": ["IL-6", "il-6", "TNF", "IL-1", "IL-8", "IL-10", "IFN"],
        "explanation": "Cytokines rise [2].",
    }
    llm = ScriptedLLM().on("candidate answers", reply)
    a = LLMGenerator(llm).answer("Which cytokine is elevated?", EV)
    assert a.question_type == "factoid"
    assert exact_answer(a) == ("IL-6", "TNF", "IL-1", "IL-8", "IL-10")
    assert a.trace["entities_dropped"] == 1
    assert a.text == "IL-6; TNF; IL-1; IL-8; IL-10. Cytokines rise [2]."
    assert [c.passage_id for c in a.citations] == ["d2#0"]


def test_a_factoid_without_markers_cites_the_passages_that_state_it_or_its_only_passage():
    reply = {"answers": ["Albendazole", "DEC"], "explanation": "The trial names it."}
    llm = ScriptedLLM().on("candidate answers", reply)
    a = LLMGenerator(llm).answer("Which drug treats filariasis?", EV)
    assert [c.passage_id for c in a.citations] == ["d1#0"]  # states "Albendazole"
    alone = LLMGenerator(llm).answer("Which drug treats filariasis?", EV[1:])
    assert [c.passage_id for c in alone.citations] == ["d2#0"]  # the one passage read
    below = tuple(Evidence(e.passage, e.score, kept=False) for e in EV[1:])
    closest = LLMGenerator(llm).answer("Which drug treats filariasis?", below)
    assert closest.insufficient and closest.citations == ()  # below tau, stated nowhere


def test_list_answer_and_malformed_json_is_degraded():
    llm = ScriptedLLM().on("List every item", ['{"answers": ["a", "b"], "explanation": ""}'])
    a = LLMGenerator(llm).answer("List the drugs used.", EV)
    assert exact_answer(a) == ("a", "b") and a.question_type == "list"
    bad = ScriptedLLM().on("List every item", '{"answers": "a, b"')
    d = LLMGenerator(bad).answer("List the drugs used.", EV)
    assert "unreadable list reply" in d.trace["degraded"]
    assert exact_answer(d) == () and d.citations == () and d.trace["raw"] == '{"answers": "a, b"'


def test_ideal_is_cut_to_the_word_limit():
    long = " ".join(f"Sentence {i} has six words [1]." for i in range(50))  # 300 words
    llm = ScriptedLLM().on("Write one paragraph", {"answer": long})
    a = LLMGenerator(llm, max_words=200, extractive=True).answer("Describe albendazole.", EV)
    assert a.question_type == "ideal" and exact_answer(a) == ()
    # whole sentences while they fit: 33 x 6 = 198 words
    assert len(a.text.split()) == 198 and a.text.endswith("32 has six words [1].")
    assert a.trace["truncated"]
    assert EXTRACTIVE_STYLE in llm.calls[0].prompt and "at most 200 words" in llm.calls[0].prompt


def test_ideal_cut_by_the_token_limit_keeps_its_whole_sentences():
    # the 1.5B ran past 464 tokens on 3 of 7 PubMedQA ideal answers: an unterminated string
    body = " ".join(f"Albendazole works {i} [1]." for i in range(40))
    llm = ScriptedLLM().on("Write one paragraph", '{"answer": "' + body)
    gen = LLMGenerator(llm, max_words=20)  # max_tokens 2 * 20 + 64 = 104 words
    a = gen.answer("Describe albendazole.", EV)
    assert "degraded" not in a.trace and "token limit" not in a.text
    assert a.text.startswith("Albendazole works 0 [1].") and a.text.endswith("[1].")
    assert len(a.text.split()) <= 20 and a.trace["truncated"]
    assert "kept its whole sentences" in a.trace["salvaged"]
    assert [c.passage_id for c in a.citations] == ["d1#0"]


def test_yesno_explanation_cut_by_the_token_limit_keeps_its_whole_sentences():
    # the 1.5B often runs past the explanation's 100 tokens: the decision used to stand alone
    body = "Albendazole cleared microfilariae [1]. " * 30
    llm = ScriptedLLM(default_probs={"yes": 0.9, "no": 0.1}).on(
        "explain the answer", '{"explanation": "' + body
    )
    a = LLMGenerator(llm).answer(Q, EV)
    assert a.text.startswith("Yes. Albendazole cleared microfilariae [1].")
    assert a.text.endswith("[1].") and "explanation_error" not in a.trace
    assert "kept its whole sentences" in a.trace["explanation_salvaged"]
    assert [c.passage_id for c in a.citations] == ["d1#0"]


def test_ideal_unreadable_without_a_cut_is_still_degraded():
    llm = ScriptedLLM().on("Write one paragraph", '{"answer": "Albendazole works [1]. It')
    a = LLMGenerator(llm).answer("Describe albendazole.", EV)  # ended, not cut
    assert "degraded" in a.trace and a.text.startswith("No answer")
    cut = ScriptedLLM().on("Write one paragraph", '{"answer": "' + "word " * 600)
    b = LLMGenerator(cut, max_words=20).answer("Describe albendazole.", EV)
    assert "degraded" in b.trace  # cut, but no whole sentence to keep


def test_limit_words_hard_cut_without_sentences():
    assert limit_words("a b c d", 2) == ("a b", True)
    assert limit_words("a b", 2) == ("a b", False)


def test_refuses_without_evidence_and_on_insufficient_verdict():
    llm = ScriptedLLM(default="unused")
    a = LLMGenerator(llm).answer(Q, ())
    assert a.insufficient and a.text == REFUSAL_TEXT and exact_answer(a) == ()
    assert a.trace["refused"] == "no evidence survived the filter"
    b = LLMGenerator(llm).answer(Q, EV, sufficient=False)
    assert b.insufficient and "judged the evidence insufficient" in b.trace["refused"]
    assert llm.calls == []


def test_refusal_is_configurable():
    llm = ScriptedLLM().on("one word", probs={"no": 1.0})
    a = LLMGenerator(llm, refuse_on_insufficient=False, explain_yesno=False).answer(
        Q, EV, sufficient=False
    )
    assert not a.insufficient and exact_answer(a) == ("no",)


def test_trace_is_json_serializable():
    llm = ScriptedLLM().on("Write one paragraph", {"answer": "Fine [1]."})
    a = LLMGenerator(llm).answer("Describe it.", EV)
    json.dumps(dict(a.trace))


def test_a_fixed_question_type_answers_a_yesno_question_in_long_form():
    llm = ScriptedLLM().on("Write one paragraph", {"answer": "Albendazole treats it [1]."})
    llm.on("answers", {"answers": ["albendazole"], "explanation": "It treats it [1]."})
    a = LLMGenerator(llm, question_type="ideal").answer(Q, EV)
    assert a.question_type == "ideal" and a.text == "Albendazole treats it [1]."
    assert LLMGenerator(llm, question_type="ideal").answer(Q, EV, "list").question_type == "list"
