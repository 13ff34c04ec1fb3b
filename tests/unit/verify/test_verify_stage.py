"""The verify stage in the one pipeline: claims and yes/no questions are decided by the
verdict over the top-ranked abstracts (before tau), the prose is written given the
decision, rationales are quoted verbatim with their indices (stand-in selector and verdict
model registered by name, a scripted LLM, a tiny BM25 corpus)."""

from __future__ import annotations

from pathlib import Path

import pytest
from tiny_corpus import bm25_corpus
from verify_stand_ins import KeywordVerdict, OverlapSelector

from fakes import ScriptedLLM
from sciera.pipeline import pipeline_from_settings
from sciera.settings import load_settings
from sciera.types import Passage, Ranking, ScoredPassage
from sciera.verify.base import AbstractText, VerdictInput
from sciera.verify.stage import VerifyStage, scifact_prediction
from sciera.verify.verifier import VerifyPolicy

DOCS = [
    ("a1", "Aspirin trial", "Aspirin lowered adenoma risk in a randomized trial. Doses were low."),
    (
        "v1",
        "Vitamin D cohort",
        "Vitamin D was not associated with polyp risk. Follow-up was long.",
    ),
    ("m1", "Malaria", "Malaria vectors transmit parasites."),
]
CLAIM = "Aspirin reduces the risk of colorectal adenoma."


@pytest.fixture(scope="module")
def corpus(tmp_path_factory: pytest.TempPathFactory) -> Path:
    return bm25_corpus(tmp_path_factory.mktemp("verify"), DOCS)


def explaining(reply: str = "A randomized trial reports it [1].") -> ScriptedLLM:
    return ScriptedLLM().on("Explanation:", reply)


def settings(tmp_path: Path, **answer):
    return load_settings(
        home=tmp_path,
        retrieve={"retriever": "bm25"},
        rerank={"reranker": "none", "depth": 3},
        filter={"top_k": 1},
        verify={"enabled": True, "selector": "overlap", "verdict": "keyword", "abstracts": 3},
        answer={"evidence": "full", **answer},
    )


def test_a_verified_claim_quotes_its_rationale_without_an_llm_call_by_default(
    corpus, tmp_path, registered
):
    llm = explaining()
    a = pipeline_from_settings(corpus, settings(tmp_path), llm=llm).answer(CLAIM)
    assert a.trace["exact"] == ("yes",) and a.trace["decided_by"] == "verifier"
    assert a.text == 'Yes: [1] "Aspirin lowered adenoma risk in a randomized trial."'
    assert not any("Explanation:" in c.prompt for c in llm.calls)  # no prose asked for
    assert [(c.passage_id, c.sentences) for c in a.citations] == [("a1#0", (0,))]


def test_a_claim_is_decided_by_the_verdict_and_explained_given_it(corpus, tmp_path, registered):
    llm = explaining()
    events: list[tuple[str, dict]] = []
    pipe = pipeline_from_settings(corpus, settings(tmp_path, explain_yesno=True), llm=llm)
    result = pipe.run(CLAIM, on_event=lambda name, data: events.append((name, data)))
    a = result.answer
    # the rationale sentences are quoted: no extractor summary of a verified claim (the
    # event still comes, naming the extractor "quoted")
    assert [name for name, _ in events] == [
        "retrieved",
        "reranked",
        "verified",
        "evidence",
        "answer",
    ]
    assert dict(events)["evidence"]["extractor"] == "quoted"
    assert result.evidence is None and "evidence" not in result.cost
    assert a.trace["pipeline"]["evidence_extractor"] == "quoted"
    assert result.verification.label == "SUPPORT"
    assert a.trace["exact"] == ("yes",) and a.trace["decided_by"] == "verifier"
    assert a.text == "Yes. A randomized trial reports it [1]."
    # the explanation prompt quotes the rationale sentence verbatim and states the decision
    prompt = llm.calls[-1].prompt
    assert '"Aspirin lowered adenoma risk in a randomized trial."' in prompt
    assert "Decision: yes" in prompt
    cite = a.citations[0]
    assert (cite.passage_id, cite.sentences) == ("a1#0", (0,))
    assert a.evidence[0].rationales[0].text == "Aspirin lowered adenoma risk in a randomized trial."


@pytest.mark.parametrize("reply", ["No, the trial found no effect [1].", "", "Maybe: unclear."])
def test_an_explanation_that_opens_against_the_verdict_is_dropped_for_the_quotes(
    corpus, tmp_path, registered, reply
):
    s = settings(tmp_path, explain_yesno=True)
    a = pipeline_from_settings(corpus, s, llm=explaining(reply)).answer(CLAIM)
    assert a.trace["exact"] == ("yes",)
    assert a.text == 'Yes: [1] "Aspirin lowered adenoma risk in a randomized trial."'
    assert a.trace.get("explanation_dropped", "") == reply
    assert [(c.passage_id, c.sentences) for c in a.citations] == [("a1#0", (0,))]


def test_the_extractor_still_runs_on_a_verified_claim_when_asked(corpus, tmp_path, registered):
    s = settings(tmp_path)
    s = s.model_copy(update={"verify": s.verify.model_copy(update={"quote_only": False})})
    events: list[tuple[str, dict]] = []
    pipe = pipeline_from_settings(corpus, s, llm=explaining())
    result = pipe.run(CLAIM, on_event=lambda name, data: events.append((name, data)))
    assert dict(events)["evidence"]["extractor"] == "full" and result.evidence is not None


def test_decision_only_quotes_the_contradicting_sentence(corpus, tmp_path, registered):
    s = settings(tmp_path, decision_only=True)
    llm = ScriptedLLM()
    q = "Is vitamin D associated with colorectal cancer?"
    a = pipeline_from_settings(corpus, s, llm=llm).answer(q)
    assert llm.calls == []  # decision only: no LLM call
    assert a.trace["verification"]["label"] == "CONTRADICT" and a.trace["exact"] == ("no",)
    assert a.text == 'No: [1] "Vitamin D was not associated with polyp risk."'
    assert [(c.passage_id, c.sentences) for c in a.citations] == [("v1#0", (0,))]


def test_a_below_tau_abstract_that_decides_joins_the_evidence_unkept():
    from sciera.pipeline.run import with_rationales
    from sciera.types import AbstractVerdict, Evidence, Rationale, Verification

    p = [Passage(f"d{i}#0", f"d{i}", 0, f"T{i}", f"Text {i}.") for i in range(3)]
    ranking = Ranking("q", tuple(ScoredPassage(x, 0.9 - i / 10, i + 1) for i, x in enumerate(p)))
    r1 = (Rationale("d1", 0, "Text 1.", 0.9),)
    verdicts = (
        AbstractVerdict("d0", "T0", "NOT ENOUGH INFO", 0.7, (0.2, 0.1, 0.7)),
        AbstractVerdict("d1", "T1", "SUPPORT", 0.9, (0.9, 0.05, 0.05), r1),
    )
    v = Verification("q", verdicts, "SUPPORT", 0.9, supporting=("d1",))
    kept = (Evidence(p[0], 0.9),)
    out = with_rationales(kept, v, ranking)
    assert [(e.passage.passage_id, e.kept, e.rationales) for e in out] == [
        ("d0#0", True, ()),
        ("d1#0", False, r1),
    ]
    nothing = Verification("q", verdicts[:1], "NOT ENOUGH INFO", 0.7)
    assert with_rationales((), nothing, ranking) == ()  # no rationale: nothing to cite


def test_undecided_evidence_is_maybe_with_the_closest_abstracts_not_a_refusal(
    corpus, tmp_path, registered
):
    a = pipeline_from_settings(corpus, settings(tmp_path, decision_only=True), llm=ScriptedLLM())
    answer = a.answer("Do malaria vectors transmit parasites?")
    assert not answer.insufficient and answer.trace["exact"] == ("maybe",)
    assert answer.trace["verification"]["label"] == "NOT ENOUGH INFO"
    assert answer.citations and answer.text.startswith("Maybe.")


def test_nothing_retrieved_is_refused(corpus, tmp_path, registered):
    pipe = pipeline_from_settings(corpus, settings(tmp_path), llm=explaining())
    a = pipe.answer("Is the zebra quasar a xylophone?")
    assert a.insufficient and a.trace["refused"] == "retrieval and verification found nothing"


def test_a_cut_explanation_keeps_its_whole_sentences(corpus, tmp_path, registered):
    llm = explaining("The trial shows lower risk [1]. It also used low doses and then the")
    s = settings(tmp_path, explain_yesno=True)
    a = pipeline_from_settings(corpus, s, llm=llm).answer(CLAIM)
    assert a.text == "Yes. The trial shows lower risk [1]." and a.trace["explanation_cut"]


def test_other_question_types_are_not_verified(corpus, tmp_path, registered):
    llm = ScriptedLLM().on("Write one paragraph", {"answer": "Trials exist [1]."})
    result = pipeline_from_settings(corpus, settings(tmp_path), llm=llm).run(
        "How does aspirin act on adenomas?"
    )
    assert result.verification is None and "verify" not in result.traces


def test_the_stage_reads_top_documents_skips_excluded_and_splits_without_a_store():
    p = [Passage(f"d{i}#0", f"d{i}", 0, f"T{i}", f"First {i}. Second {i}.") for i in range(4)]
    items = [ScoredPassage(x, 1.0 - i / 10, i + 1) for i, x in enumerate(p)]
    items[1] = ScoredPassage(p[1], 0.9, 2, {"rr": {"exclude": "instructions aimed at it"}})
    stage = VerifyStage(OverlapSelector(), KeywordVerdict(), abstracts=2)
    ranking = Ranking("q", tuple(items), "rr")
    assert stage.documents(ranking) == ["d0", "d2"]
    v, trace = stage.verify("first", ranking)
    assert [a.doc_id for a in v.verdicts] == ["d0", "d2"]
    assert trace["sentences"] == "split from the passages"
    assert [r.text for r in v.verdicts[0].rationales] == ["First 0."]
    pred = scifact_prediction("12", v)
    assert pred == {
        "id": 12,
        "evidence": {
            "d0": {"label": "NOT ENOUGH INFO", "sentences": [0]},
            "d2": {"label": "NOT ENOUGH INFO", "sentences": [0]},
        },
    }


def test_stand_ins_follow_the_protocols():
    from sciera.verify.base import RationaleSelector, VerdictModel

    assert isinstance(OverlapSelector(), RationaleSelector)
    assert isinstance(KeywordVerdict(), VerdictModel)
    assert OverlapSelector().score_many("aspirin", [AbstractText("a", "", ("Aspirin.",))])
    probs = KeywordVerdict().predict_many("lowered adenoma", [VerdictInput(("lowered adenoma",))])
    assert probs == [(0.9, 0.05, 0.05)]


def test_a_calibrated_ranking_gives_each_abstract_its_best_passage_as_relevance():
    p = [
        Passage("d0#0", "d0", 0, "T0", "Aspirin lowered adenoma risk."),
        Passage("d0#1", "d0", 1, "T0", "More on aspirin."),
        Passage("d1#0", "d1", 0, "T1", "Aspirin lowered adenoma risk in mice."),
    ]
    scores = (0.3, 0.9, 0.2)
    items = tuple(
        ScoredPassage(x, s, i + 1) for i, (x, s) in enumerate(zip(p, scores, strict=True))
    )
    stage = VerifyStage(
        OverlapSelector(), KeywordVerdict(), VerifyPolicy(min_rationale=0.0, min_relevance=0.5)
    )
    v, trace = stage.verify("aspirin lowered adenoma", Ranking("q", items, "ce", calibrated=True))
    assert trace["relevance"] == {"d0": 0.9, "d1": 0.2}
    assert [a.label for a in v.verdicts] == ["SUPPORT", "NOT ENOUGH INFO"]
    # scores that only order passages are not probabilities: no gate
    v2, trace2 = stage.verify("aspirin lowered adenoma", Ranking("q", items, "bm25"))
    assert "relevance" not in trace2 and [a.label for a in v2.verdicts] == ["SUPPORT"] * 2
