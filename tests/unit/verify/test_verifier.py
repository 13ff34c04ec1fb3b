"""verify_abstracts: rationale picking, decisions and the records it returns, with
deterministic stand-in backends (no model)."""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import replace

import pytest

from sciera.types import CONTRADICT, NOT_ENOUGH_INFO, SUPPORT
from sciera.verify import AbstractText, VerdictInput, VerifyPolicy, verify_abstracts
from sciera.verify.base import predict_one, score_one
from sciera.verify.verifier import decide, pick_rationales, read_and_cite


class WordSelector:
    """P(rationale) = 0.9 for a sentence containing the claim's last word, else 0.1."""

    name = "words"

    def score_many(self, claim: str, abstracts: Sequence[AbstractText]) -> list[list[float]]:
        key = claim.rstrip(".").split()[-1].lower()
        return [[0.9 if key in s.lower() else 0.1 for s in a.sentences] for a in abstracts]


class CueVerdict:
    """SUPPORT when the rationale says "increases", CONTRADICT for "decreases", else NEI;
    records what it was asked."""

    name = "cues"

    def __init__(self) -> None:
        self.asked: list[VerdictInput] = []

    def predict_many(self, claim: str, inputs: Sequence[VerdictInput]):
        self.asked += inputs
        out = []
        for item in inputs:
            text = " ".join(item.sentences)
            if "increases" in text:
                out.append((0.8, 0.1, 0.1))
            elif "decreases" in text:
                out.append((0.1, 0.7, 0.2))
            else:
                out.append((0.2, 0.2, 0.6))
        return out


ABSTRACTS = [
    ("d1", "Trial one", ["Background on risk.", "Vitamin D increases bone density.", "End."]),
    ("d2", "Trial two", ["Vitamin D decreases bone density in mice.", "Other."]),
    ("d3", "Unrelated", ["Nothing here.", "Still nothing."]),
]


def test_verdicts_quote_rationales_verbatim_with_indices_and_scores():
    verdict = CueVerdict()
    policy = VerifyPolicy(min_rationale=0.5, fallback=0, strong=0.6)
    out = verify_abstracts("Vitamin D raises density.", ABSTRACTS, WordSelector(), verdict, policy)
    by_doc = {v.doc_id: v for v in out.verdicts}
    assert by_doc["d1"].label == SUPPORT and by_doc["d2"].label == CONTRADICT
    assert [(r.index, r.text, r.score) for r in by_doc["d1"].rationales] == [
        (1, "Vitamin D increases bone density.", 0.9)
    ]
    assert by_doc["d1"].rationales[0].text in ABSTRACTS[0][2]
    # no sentence passes and no fallback: NEI without asking the verdict model
    assert by_doc["d3"].label == NOT_ENOUGH_INFO and by_doc["d3"].rationales == ()
    assert len(verdict.asked) == 2 and all(i.title for i in verdict.asked)
    assert out.conflicting and out.supporting == ("d1",) and out.contradicting == ("d2",)


def test_fallback_reads_the_best_sentences_when_none_passes():
    verdict = CueVerdict()
    policy = VerifyPolicy(min_rationale=0.95, fallback=1)
    out = verify_abstracts(
        "Vitamin D raises density.", ABSTRACTS[:1], WordSelector(), verdict, policy
    )
    assert [r.index for r in out.verdicts[0].rationales] == [1]
    assert out.verdicts[0].label == SUPPORT and out.label == SUPPORT


def test_min_confidence_turns_a_weak_label_into_not_enough_info():
    policy = VerifyPolicy(min_rationale=0.5, min_confidence=0.75)
    out = verify_abstracts(
        "Vitamin D raises density.", ABSTRACTS[:2], WordSelector(), CueVerdict(), policy
    )
    labels = {v.doc_id: v.label for v in out.verdicts}
    assert labels == {"d1": SUPPORT, "d2": NOT_ENOUGH_INFO}  # 0.7 < 0.75
    assert out.verdicts[1].confidence == pytest.approx(0.2)


def test_pick_rationales_keeps_the_best_in_abstract_order():
    policy = VerifyPolicy(min_rationale=0.5, max_rationales=2, fallback=2)
    assert pick_rationales([0.6, 0.9, 0.7, 0.1], policy) == ([1, 2], True)
    assert pick_rationales([0.1, 0.3, 0.2], policy) == ([1, 2], False)
    assert pick_rationales([], policy) == ([], False)
    assert decide((0.2, 0.3, 0.5), policy) == (NOT_ENOUGH_INFO, 0.5)


def test_read_and_cite_cites_the_likely_rationales_and_reads_them_too():
    plain = VerifyPolicy(min_rationale=0.5, max_rationales=3, fallback=2)
    assert read_and_cite([0.1, 0.3, 0.05], plain) == ([0, 1], [0, 1])  # cites what it reads
    cite = VerifyPolicy(min_rationale=0.5, max_rationales=3, fallback=2, min_cited=0.2)
    # a fallback sentence read as context is not cited
    assert read_and_cite([0.15, 0.1, 0.05], cite) == ([0, 1], [0])
    assert read_and_cite([0.1, 0.3, 0.05, 0.25], cite) == ([1, 3], [1, 3])
    # a cited sentence below min_rationale is read as well
    assert read_and_cite([0.6, 0.3, 0.05], cite) == ([0, 1], [0, 1])
    # at most max_rationales are cited, the best ones
    two = VerifyPolicy(min_rationale=0.9, max_rationales=2, fallback=1, min_cited=0.2)
    assert read_and_cite([0.3, 0.5, 0.4, 0.1], two) == ([1, 2], [1, 2])
    # VeriSci-style (no fallback): nothing read unless something is cited
    strict = VerifyPolicy(min_rationale=0.5, fallback=0, min_cited=0.2)
    assert read_and_cite([0.3, 0.1], strict) == ([0], [0])
    assert read_and_cite([0.1, 0.05], strict) == ([], [])
    assert read_and_cite([], cite) == ([], [])
    with pytest.raises(ValueError, match="min_cited"):
        VerifyPolicy(min_cited=1.5)


def test_verdicts_cite_the_cited_sentences_and_read_the_context():
    class Scores:
        name = "fixed"

        def score_many(self, claim, abstracts):
            return [[0.15, 0.1, 0.05][: len(a.sentences)] for a in abstracts]

    verdict = CueVerdict()
    policy = VerifyPolicy(min_rationale=0.5, fallback=2, min_cited=0.12)
    out = verify_abstracts("Vitamin D raises density.", ABSTRACTS[:1], Scores(), verdict, policy)
    assert verdict.asked[0].sentences == (
        "Background on risk.",
        "Vitamin D increases bone density.",
    )
    assert [r.index for r in out.verdicts[0].rationales] == [0]
    assert out.verdicts[0].label == SUPPORT  # read from the context sentence
    # an abstract decided NOT ENOUGH INFO shows the closest sentences it read
    nei = verify_abstracts("Vitamin D raises density.", ABSTRACTS[2:], Scores(), verdict, policy)
    assert nei.verdicts[0].label == NOT_ENOUGH_INFO
    assert [r.index for r in nei.verdicts[0].rationales] == [0, 1]
    # a question reads its best max_rationales (3, not the claims' fallback of 2: as its
    # combiner's rows were read) and cites what it reads (min_cited was chosen on claims)
    asked = verify_abstracts(
        "Does vitamin D raise density?", ABSTRACTS[:1], Scores(), verdict, policy
    )
    assert [r.index for r in asked.verdicts[0].rationales] == [0, 1, 2]
    assert len(verdict.asked[-1].sentences) == 3
    assert policy.for_question() == replace(policy, fallback=3, min_cited=None)


def test_empty_abstracts_are_skipped_and_single_forms_work():
    out = verify_abstracts("x density", [("e", "t", [])], WordSelector(), CueVerdict())
    assert out.verdicts == () and out.label == NOT_ENOUGH_INFO
    assert score_one(WordSelector(), "x density", ["density", "no"]) == [0.9, 0.1]
    assert predict_one(CueVerdict(), "x", ["it increases"]) == (0.8, 0.1, 0.1)


def test_policy_from_card_and_bounds():
    card = {"policy": {"min_rationale": 0.4, "strong": 0.7, "unknown": 1}}
    p = VerifyPolicy.from_card(card, fallback=0, min_confidence=None)
    assert (p.min_rationale, p.strong, p.fallback, p.min_confidence) == (0.4, 0.7, 0, 0.0)
    with pytest.raises(ValueError):
        VerifyPolicy(min_rationale=1.2)
    with pytest.raises(ValueError):
        VerifyPolicy(max_rationales=0)


def test_the_relevance_gate_decides_evidence_and_the_verdict_decides_the_side():
    verdict = CueVerdict()
    policy = VerifyPolicy(min_rationale=0.5, fallback=2, min_relevance=0.5, strong=0.3)
    texts = [
        AbstractText("d1", "Trial one", tuple(ABSTRACTS[0][2]), relevance=0.8),
        AbstractText("d2", "Trial two", tuple(ABSTRACTS[1][2]), relevance=0.2),
        # the verdict model says NEI (0.6) but the relevance model says evidence: the more
        # probable of SUPPORT and CONTRADICT decides (a tie goes to SUPPORT)
        AbstractText("d3", "Unrelated", ("Nothing here.",), relevance=0.9),
        AbstractText("d4", "No relevance known", ("Nothing here.",)),
    ]
    out = verify_abstracts("Vitamin D raises density.", texts, WordSelector(), verdict, policy)
    by = {v.doc_id: v for v in out.verdicts}
    assert by["d1"].label == SUPPORT and by["d1"].confidence == pytest.approx(0.8 * 0.8 / 0.9)
    # below the gate: NEI without a verdict call, confidence 1 - P(relevant)
    assert by["d2"].label == NOT_ENOUGH_INFO and by["d2"].confidence == pytest.approx(0.8)
    assert by["d2"].rationales  # still shown, with their scores
    assert by["d3"].label == SUPPORT and by["d3"].confidence == pytest.approx(0.45)
    assert by["d4"].label == NOT_ENOUGH_INFO  # no relevance: the verdict model decides
    assert len(verdict.asked) == 3  # d1, d3, d4
    # what the verdict model read is said, so a placeholder is never shown as its reading
    assert [v.read for v in out.verdicts] == [True, False, True, True]
    assert by["d2"].probs == (0.0, 0.0, 1.0)
    # the claim's NOT ENOUGH INFO is as sure as d2 itself (1 - P(relevant)), not 1.0
    alone = verify_abstracts(
        "Vitamin D raises density.", texts[1:2], WordSelector(), verdict, policy
    )
    assert alone.label == NOT_ENOUGH_INFO and alone.confidence == pytest.approx(0.8)
    assert out.label == SUPPORT and out.supporting == ("d1", "d3")
    # a gate of 0 is off: d2 is read and contradicts
    off = verify_abstracts("Vitamin D raises density.", texts, WordSelector(), CueVerdict())
    assert {v.doc_id: v.label for v in off.verdicts}["d2"] == CONTRADICT
    with pytest.raises(ValueError, match="min_relevance"):
        VerifyPolicy(min_relevance=1.5)


def test_a_relevance_weight_below_one_lets_the_verdicts_nei_count_in_the_gate():
    from sciera.verify.verifier import evidence_score

    texts = [
        # relevant, and the verdict reads evidence: e = 0.8**0.5 * 0.9**0.5 ~ 0.85
        AbstractText("d1", "Trial one", tuple(ABSTRACTS[0][2]), relevance=0.8),
        # relevant, but the verdict says NEI (0.6): e = 0.9**0.5 * 0.4**0.5 = 0.6 < 0.7
        AbstractText("d3", "Unrelated", ("Nothing here.",), relevance=0.9),
        # 0.3**0.5 ~ 0.55 < 0.7 whatever the verdict: NEI without a verdict call
        AbstractText("d2", "Trial two", tuple(ABSTRACTS[1][2]), relevance=0.3),
    ]
    verdict = CueVerdict()
    policy = VerifyPolicy(min_rationale=0.5, fallback=2, min_relevance=0.7, relevance_weight=0.5)
    out = verify_abstracts("Vitamin D raises density.", texts, WordSelector(), verdict, policy)
    by = {v.doc_id: v for v in out.verdicts}
    e1 = (0.8 * 0.9) ** 0.5
    assert by["d1"].label == SUPPORT and by["d1"].confidence == pytest.approx(e1 * 0.8 / 0.9)
    assert by["d3"].label == NOT_ENOUGH_INFO
    assert by["d3"].confidence == pytest.approx(1 - (0.9 * 0.4) ** 0.5)
    assert by["d2"].label == NOT_ENOUGH_INFO and by["d2"].confidence == pytest.approx(1 - 0.3**0.5)
    assert len(verdict.asked) == 2  # d1 and d3
    # a question's "maybe" is not "off the topic": P(relevant) alone gates it (0.9 passes)
    asked = verify_abstracts(
        "Does vitamin D raise density?", texts, WordSelector(), verdict, policy
    )
    assert {v.doc_id: v.label for v in asked.verdicts}["d3"] == SUPPORT
    # the weight's bounds, and w = 1 is P(relevant) alone whatever the verdict says
    assert evidence_score(0.6, (0.0, 0.0, 1.0), 1.0) == pytest.approx(0.6)
    assert evidence_score(0.6, None, 0.5) == pytest.approx(0.6**0.5)
    with pytest.raises(ValueError, match="relevance_weight"):
        VerifyPolicy(relevance_weight=1.5)


def test_a_gated_verdict_carries_the_relevance_it_read():
    from sciera.verify.stage import verification_json

    texts = [
        AbstractText("d1", "T", tuple(ABSTRACTS[0][2]), relevance=0.8),
        AbstractText("d2", "T", tuple(ABSTRACTS[1][2])),
    ]
    gate = VerifyPolicy(min_relevance=0.5)
    out = verify_abstracts("Vitamin D raises density.", texts, WordSelector(), CueVerdict(), gate)
    assert [v.relevance for v in out.verdicts] == [0.8, None]
    assert [a["relevance"] for a in verification_json(out)["abstracts"]] == [0.8, None]
    assert [a["read"] for a in verification_json(out)["abstracts"]] == [True, True]
    off = verify_abstracts("Vitamin D raises density.", texts, WordSelector(), CueVerdict())
    assert off.verdicts[0].relevance is None  # no gate: not read


class CitingScores:
    """Reads by fixed scores, cites by another set (a citer), and counts its citer calls."""

    name = "citing"

    def __init__(self, read: list[float], cite: list[float] | None) -> None:
        self.read, self.cite, self.cite_calls, self.cited_docs = read, cite, 0, []

    def score_many(self, claim, abstracts):
        return [self.read[: len(a.sentences)] for a in abstracts]

    def cite_many(self, claim, abstracts):
        self.cite_calls += 1
        self.cited_docs += [a.doc_id for a in abstracts]
        if self.cite is None:
            return None
        return [self.cite[: len(a.sentences)] for a in abstracts]


def test_read_and_cite_quotes_by_the_citers_scores_and_reads_as_without():
    cite = VerifyPolicy(min_rationale=0.5, max_rationales=2, fallback=1, min_cited=0.3)
    quote = replace(cite, min_quoted=0.3)
    # reading as without a citer (the fallback best, 1, and the cited-by-score 1);
    # quoted: the citer's best reaching min_quoted (2 and 0), not necessarily read
    assert read_and_cite([0.2, 0.4, 0.1], cite) == ([1], [1])
    assert read_and_cite([0.2, 0.4, 0.1], quote, [0.35, 0.1, 0.9]) == ([1], [0, 2])
    # none of the citer's reaches min_quoted: its best one
    assert read_and_cite([0.2, 0.4, 0.1], quote, [0.1, 0.2, 0.05]) == ([1], [1])
    # nothing read: nothing quoted either
    strict = replace(quote, fallback=0, min_cited=0.5)
    assert read_and_cite([0.2, 0.4, 0.1], strict, [0.9, 0.9, 0.9]) == ([], [])
    # without min_quoted the citer's scores are not read
    assert read_and_cite([0.2, 0.4, 0.1], cite, [0.9, 0.9, 0.9]) == ([1], [1])
    with pytest.raises(ValueError, match="citing scores"):
        read_and_cite([0.2, 0.4], quote, [0.5])
    with pytest.raises(ValueError, match="min_quoted"):
        VerifyPolicy(min_quoted=2.0)


def test_a_citing_selector_quotes_its_citers_sentences_and_the_verdict_reads_the_same():
    policy = VerifyPolicy(min_rationale=0.5, fallback=1, min_cited=0.3, min_quoted=0.3)
    plain_verdict, verdict = CueVerdict(), CueVerdict()
    verify_abstracts(
        "Vitamin D raises density.",
        ABSTRACTS[:1],
        CitingScores([0.1, 0.4, 0.2], None),
        plain_verdict,
        policy,
    )
    selector = CitingScores([0.1, 0.4, 0.2], [0.6, 0.8, 0.1])
    out = verify_abstracts("Vitamin D raises density.", ABSTRACTS[:1], selector, verdict, policy)
    v = out.verdicts[0]
    # read as without the citer (the selector's best, 1); quoted: the citer's best (0, 1)
    assert verdict.asked == plain_verdict.asked
    assert verdict.asked[0].sentences == ("Vitamin D increases bone density.",)
    assert v.label == SUPPORT
    assert [(r.index, r.text, r.score) for r in v.rationales] == [
        (0, "Background on risk.", 0.6),
        (1, "Vitamin D increases bone density.", 0.8),
    ]
    # a selector without a citer (None) cites by its own scores
    out = verify_abstracts(
        "Vitamin D raises density.",
        ABSTRACTS[:1],
        CitingScores([0.1, 0.4, 0.2], None),
        CueVerdict(),
        policy,
    )
    assert [r.index for r in out.verdicts[0].rationales] == [1]
    # a question cites what it reads: the citer is not asked
    asked = CitingScores([0.1, 0.4, 0.2], [0.6, 0.8, 0.1])
    verify_abstracts("Does vitamin D raise density?", ABSTRACTS[:1], asked, CueVerdict(), policy)
    assert asked.cite_calls == 0
    # nor is it without min_quoted
    verify_abstracts(
        "Vitamin D raises density.",
        ABSTRACTS[:1],
        asked,
        CueVerdict(),
        replace(policy, min_quoted=None),
    )
    assert asked.cite_calls == 0


def test_the_citer_reads_only_abstracts_that_can_pass_the_gate():
    policy = VerifyPolicy(min_rationale=0.5, fallback=1, min_quoted=0.3, min_relevance=0.5)
    items = [
        AbstractText(doc, title, tuple(sents), relevance)
        for (doc, title, sents), relevance in zip(ABSTRACTS[:2], (0.9, 0.2), strict=True)
    ]
    selector = CitingScores([0.1, 0.4, 0.2], [0.6, 0.8, 0.1])
    out = verify_abstracts("Vitamin D raises density.", items, selector, CueVerdict(), policy)
    assert selector.cited_docs == ["d1"]  # d2's P(relevant) 0.2 cannot reach the gate
    by_doc = {v.doc_id: v for v in out.verdicts}
    assert by_doc["d2"].label == NOT_ENOUGH_INFO
    assert [(r.index, r.score) for r in by_doc["d2"].rationales] == [(1, 0.4)]  # the head read it
    assert [r.index for r in by_doc["d1"].rationales] == [0, 1]
