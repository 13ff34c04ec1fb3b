"""Evidence extractors through the ScriptedLLM: evidence per passage, sufficiency, CR."""

from __future__ import annotations

import pytest

from fakes import ScriptedLLM
from sciera.evidence.base import EvidenceExtractor
from sciera.evidence.deepera import DeepEraExtractor
from sciera.evidence.full import FullExtractor
from sciera.evidence.rational import RationalExtractor
from sciera.evidence.registry import make_extractor
from sciera.evidence.vanilla import VanillaExtractor
from sciera.settings import load_settings
from sciera.types import Passage, Ranking, ScoredPassage

Q = "Is albendazole used to treat lymphatic filariasis?"
P1 = Passage("d1#0", "d1", 0, "Filariasis", "Albendazole treats lymphatic filariasis in trials.")
P2 = Passage("d2#0", "d2", 0, "Curcumin", "Curcumin reduces inflammation in chondrocytes.")
# contents: "Filariasis\nAlbendazole treats lymphatic filariasis in trials." = 7 words
#           "Curcumin\nCurcumin reduces inflammation in chondrocytes." = 6 words


def ranking(stage: str = "bm25", provenance: list[dict] | None = None) -> Ranking:
    prov = provenance or [{}, {}]
    items = (ScoredPassage(P1, 2.0, 1, prov[0]), ScoredPassage(P2, 1.0, 2, prov[1]))
    return Ranking(Q, items, stage)


def test_full_keeps_passages_with_cr_one():
    res = FullExtractor().extract(Q, ranking())
    assert isinstance(FullExtractor(), EvidenceExtractor)
    assert [e.passage for e in res.evidence] == [P1, P2]
    assert [e.summary for e in res.evidence] == ["", ""]
    assert res.sufficient is None and res.compression_ratio == 1.0


def test_rational_reasons_judges_and_attributes():
    reply = (
        "<reason>Passage 1 is about albendazole; passage 2 is unrelated.</reason>\n"
        "<sufficient>yes</sufficient>\n"
        "<extract>Albendazole treats lymphatic filariasis [1]. Zebra quokka.</extract> extra"
    )
    llm = ScriptedLLM().on("knowledge reasoner", reply)
    res = RationalExtractor(llm).extract(Q, ranking())
    call = llm.calls[0]
    assert call.params["stop"] == ["</extract>"]
    assert '<passage id="1">' in call.prompt and '<passage id="2">' in call.prompt
    assert res.sufficient is True
    assert [e.passage.passage_id for e in res.evidence] == ["d1#0"]
    assert res.evidence[0].summary == "Albendazole treats lymphatic filariasis."
    assert res.evidence[0].score == 2.0
    assert res.trace["unsupported_sentences"] == ["Zebra quokka."]
    # 13 passage words / 7 extract words ("Albendazole ... [1]. Zebra quokka.")
    assert res.compression_ratio == pytest.approx(13 / 7)
    assert "albendazole" in res.trace["reason"]


def test_rational_insufficient_verdict():
    reply = (
        "<reason>Nothing here.</reason><sufficient>no</sufficient>"
        "<extract>Curcumin reduces inflammation."
    )
    res = RationalExtractor(ScriptedLLM(default=reply)).extract(Q, ranking())
    assert res.sufficient is False
    assert [e.passage.passage_id for e in res.evidence] == ["d2#0"]  # by word overlap


def test_malformed_reply_gives_no_evidence_not_a_crash():
    reply = "<reason>Albendazole treats filariasis.</reason> <sufficient>yes"
    res = RationalExtractor(ScriptedLLM(default=reply)).extract(Q, ranking())
    assert res.evidence == () and res.sufficient is True
    assert "no <extract> block" in res.trace["parse_error"]
    assert res.compression_ratio == 13.0  # empty evidence counts as one token


def test_missing_optional_reason_is_silent_missing_extract_warns_once(caplog):
    no_reason = "<sufficient>yes</sufficient><extract>Albendazole treats filariasis."
    with caplog.at_level("WARNING"):
        res = RationalExtractor(ScriptedLLM(default=no_reason)).extract(Q, ranking())
    assert [e.passage.passage_id for e in res.evidence] == ["d1#0"]
    assert res.trace["reason"] == "" and not caplog.records
    with caplog.at_level("WARNING"):
        RationalExtractor(ScriptedLLM(default="<reason>x</reason>")).extract(Q, ranking())
    assert [r.getMessage() for r in caplog.records] == ["rational evidence: no <extract> block"]


def test_reply_cut_off_before_extract_gets_one_follow_up_turn():
    rambling = "<reason>" + "The question asks about albendazole. " * 20
    llm = (
        ScriptedLLM()
        .on("stopped before", "<sufficient>yes</sufficient><extract>Albendazole treats filariasis.")
        .on("Question:", rambling)
    )
    res = RationalExtractor(llm, max_tokens=30).extract(Q, ranking())
    assert [e.passage.passage_id for e in res.evidence] == ["d1#0"] and res.sufficient is True
    assert res.trace["recovered"] is True and "[follow-up]" in res.trace["raw"]
    follow = llm.calls[-1].messages
    assert [m.role for m in follow[-2:]] == ["assistant", "user"]
    assert follow[:-2] == llm.calls[0].messages  # same prefix: KV cache reuse
    assert res.trace["completion_tokens"] == 30 + 3  # whitespace tokens


def test_reply_that_ends_after_reason_gets_the_follow_up_turn_too():
    # what the 1.5B does on PubMedQA: "<reason>...</reason>" and end of turn
    llm = (
        ScriptedLLM()
        .on("stopped before", "<sufficient>no</sufficient><extract>Albendazole treats filariasis.")
        .on("Question:", "<reason>It is about albendazole.</reason>")
    )
    res = RationalExtractor(llm).extract(Q, ranking())
    assert len(llm.calls) == 2 and res.trace["recovered"] is True
    assert res.sufficient is False and [e.passage.passage_id for e in res.evidence] == ["d1#0"]


def test_first_replys_verdict_stands_when_the_follow_up_has_none():
    llm = (
        ScriptedLLM()
        .on("stopped before", "<extract>Albendazole treats filariasis.")
        .on("Question:", "<reason>x</reason><sufficient>yes</sufficient>")
    )
    res = RationalExtractor(llm).extract(Q, ranking())
    assert res.sufficient is True and [e.passage.passage_id for e in res.evidence] == ["d1#0"]


def test_follow_up_without_extract_is_still_no_evidence():
    llm = ScriptedLLM(default="<reason>short</reason><sufficient>no</sufficient>")
    res = RationalExtractor(llm).extract(Q, ranking())
    assert len(llm.calls) == 2 and res.evidence == () and res.sufficient is False
    assert "no <extract> block" in res.trace["parse_error"]


def test_untagged_reply_is_an_extract_whose_unsupported_sentences_drop():
    reply = "Albendazole treats lymphatic filariasis. I cannot help with that."
    res = VanillaExtractor(ScriptedLLM(default=reply)).extract(Q, ranking())
    assert res.trace["untagged"] and "parse_error" not in res.trace
    assert [e.passage.passage_id for e in res.evidence] == ["d1#0"]
    assert res.trace["unsupported_sentences"] == ["I cannot help with that."]
    res = VanillaExtractor(ScriptedLLM(default="Nothing relevant.")).extract(Q, ranking())
    assert res.evidence == ()


def test_vanilla_does_not_judge_sufficiency():
    llm = ScriptedLLM(default="<extract>Curcumin reduces inflammation [2]. Albendazole [1].")
    res = VanillaExtractor(llm).extract(Q, ranking())
    assert "knowledge extractor" in llm.calls[0].prompt and "<reason>" not in llm.calls[0].prompt
    assert res.sufficient is None
    assert [e.passage.passage_id for e in res.evidence] == ["d1#0", "d2#0"]
    assert res.compression_ratio == pytest.approx(13 / 6)


def _summaries() -> ScriptedLLM:
    return (
        ScriptedLLM()
        .on(
            "Research question",
            {"topic": "t", "entity_type": "e", "intent": "factual", "expected_answer_type": "a"},
        )
        .on("Write the summary", "Albendazole treats filariasis.")
    )


def test_deepera_summarizes_every_kept_passage_with_the_reranker_intent():
    intent = {"topic": "t", "entity_type": "e", "intent": "causal", "expected_answer_type": "a"}
    llm = _summaries()
    prov = [{"deepera": {"intent": intent}}, {"deepera": {"intent": intent}}]
    res = DeepEraExtractor(llm).extract(Q, ranking("deepera", prov))
    assert [e.summary for e in res.evidence] == ["Albendazole treats filariasis."] * 2
    assert res.trace["unsummarized"] == [] and res.trace["intent"]["intent"] == "causal"
    assert "Research question" not in " ".join(c.prompt for c in llm.calls)  # intent reused
    assert res.sufficient is None
    # the kept passages (13 words) against the two 3-word summaries
    assert res.compression_ratio == pytest.approx(13 / 6)


def test_deepera_empty_ranking_is_insufficient():
    llm = _summaries()
    res = DeepEraExtractor(llm).extract(Q, Ranking(Q, (), "deepera"))
    assert res.evidence == () and res.sufficient is False and llm.calls == []


def test_deepera_over_another_reranker_recognises_the_intent_itself():
    llm = _summaries()
    res = DeepEraExtractor(llm).extract(Q, ranking())
    assert [e.passage.passage_id for e in res.evidence] == ["d1#0", "d2#0"]
    assert res.trace["intent_recognized"] and res.trace["intent"]["intent"] == "factual"
    no_intent = DeepEraExtractor(_summaries(), use_intent=False).extract(Q, ranking())
    assert no_intent.trace["intent"] is None


def test_registry_builds_every_extractor():
    s = load_settings()
    llm = ScriptedLLM(default="<extract>x")
    for name in ("rational", "vanilla", "full"):
        assert make_extractor(name, s, llm=llm).name == name
    assert make_extractor("deepera", s, llm=llm).name == "deepera"
    with pytest.raises(ValueError, match="unknown evidence extractor"):
        make_extractor("nope", s)
