"""Base candidates keep the gold, injection keeps 30, distractor generation with retries."""

from __future__ import annotations

from fakes import ScriptedLLM
from sciera.datasets.ssli.contexts import (
    base_candidates,
    generate_distractors,
    inject,
)
from sciera.datasets.ssli.validate import AnswerKey
from sciera.types import Candidate, Passage, Ranking


def _key(*span: str) -> AnswerKey:
    """A key span only (no answer words: the restatement rules stay quiet)."""
    return AnswerKey(tuple(span), frozenset())


def _p(i: int) -> Passage:
    return Passage(f"d{i}#0", f"d{i}", 0, f"T{i}", f"text {i}")


def test_gold_missed_by_retriever_replaces_last_candidate() -> None:
    ranking = Ranking.from_scores("q", [(_p(i), 10.0 - i) for i in range(5)], "bm25")
    gold = _p(99)
    cands = base_candidates(ranking, [gold], total=4)
    assert [c.passage_id for c in cands] == ["d0#0", "d1#0", "d2#0", "d99#0"]
    assert cands[3].text == "T99\ntext 99"
    kept = base_candidates(ranking, [_p(1)], total=3)
    assert [c.passage_id for c in kept] == ["d0#0", "d1#0", "d2#0"]


def test_inject_drops_lowest_non_gold_and_appends() -> None:
    base = [Candidate(f"d{i}#0", "") for i in range(5)]
    extra = [Candidate("ssli:q:1", "x", True, "background")]
    out = inject(base, extra, {"d4#0"}, total=5)
    assert [c.passage_id for c in out] == ["d0#0", "d1#0", "d2#0", "d4#0", "ssli:q:1"]


QUESTION = "Does metformin lower hepatic glucose production in type 2 diabetes?"
ANSWER = "Metformin lowered hepatic glucose production by 30 percent."
GOLD = "Metformin lowered hepatic glucose production by 30 percent in type 2 diabetes patients."


def test_distractor_rejected_then_regenerated_with_feedback() -> None:
    llm = (
        ScriptedLLM()
        .on(
            "design distractor passages",
            {
                "guidance": [
                    {
                        "DocID": 1,
                        "TargetType": "misleading",
                        "MainIdea": "m",
                        "AnswerAvoidance": "a",
                    },
                    {
                        "DocID": 2,
                        "TargetType": "background",
                        "MainIdea": "m",
                        "AnswerAvoidance": "a",
                    },
                ]
            },
        )
        .on(
            "previous attempt was rejected",
            {
                "passage": (
                    "Metformin effects on hepatic glucose output in type 1 diabetes remain unclear."
                )
            },
        )
        .on(
            "write one distractor",
            {
                "passage": (
                    "In type 2 diabetes, metformin lowered hepatic glucose production by 30 percent"
                )
            },
        )
    )
    ctx = [_p(1)]
    out = generate_distractors(
        llm, QUESTION, ANSWER, GOLD, _key("hepatic", "glucose", "production"), ctx, 2, retries=1
    )
    assert [g.target_type for g in out.guidance] == ["misleading", "background"]
    # the second slot's retry writes the first slot's passage again: a duplicate
    reasons = [r.reason for _, _, r in out.rejected]
    assert reasons == ["contains_answer", "contains_answer", "duplicate_distractor"]
    assert len(out.accepted) == 1 and "type 1" in out.accepted[0][0]
    feedback = [c for c in llm.calls if "previous attempt" in c.prompt]
    assert len(feedback) == 2 and "repeated the gold answer" in feedback[0].prompt
    # the first attempt sees the gold answer; a retry after contains_answer does not
    first = [c for c in llm.calls if "write one distractor" in c.prompt.lower()]
    assert ANSWER in first[0].prompt
    assert all(ANSWER not in c.prompt and "(withheld)" in c.prompt for c in feedback)
    # the passage text is delimited as untrusted data
    assert '<context id="1">' in llm.calls[0].prompt


def test_off_topic_retry_keeps_the_answer_and_names_the_reason() -> None:
    guidance = {
        "guidance": [
            {"DocID": 1, "TargetType": "background", "MainIdea": "m", "AnswerAvoidance": "a"}
        ]
    }
    llm = (
        ScriptedLLM()
        .on("design distractor passages", guidance)
        .on("previous attempt was rejected", {"passage": "Soil bacteria fix nitrogen."})
        .on("write one distractor", {"passage": "Rainfall patterns shifted in Peru."})
    )
    out = generate_distractors(llm, QUESTION, ANSWER, GOLD, _key("hepatic"), [_p(1)], 1, retries=1)
    assert [r.reason for _, _, r in out.rejected] == ["off_topic", "off_topic"]
    assert out.accepted == []
    retry = [c for c in llm.calls if "previous attempt" in c.prompt]
    assert len(retry) == 1 and "off_topic" in retry[0].prompt and ANSWER in retry[0].prompt


def test_unparseable_guidance_gives_no_distractors() -> None:
    bad = {
        "guidance": [{"DocID": 1, "TargetType": "bogus", "MainIdea": "m", "AnswerAvoidance": "a"}]
    }
    llm = ScriptedLLM().on("design distractor passages", bad)
    out = generate_distractors(llm, QUESTION, ANSWER, GOLD, _key(), [_p(1)], 3)
    assert out.guidance == [] and out.accepted == [] and "bogus" in out.error
    assert len(llm.calls) == 1


def test_distractor_cut_by_the_token_limit_keeps_its_whole_sentences() -> None:
    guidance = {
        "guidance": [
            {"DocID": 1, "TargetType": "misleading", "MainIdea": "m", "AnswerAvoidance": "a"},
            {"DocID": 1, "TargetType": "background", "MainIdea": "m", "AnswerAvoidance": "a"},
        ]
    }
    first = "Metformin alters gut microbiota composition in type 2 diabetes."
    more = " ".join(["Bile acids shift in treated mice."] * 60)  # 360 words
    # a reply that runs past the 220-token limit: its JSON string is never closed
    cut = '{"passage": "' + first + " " + more + '"}'
    unclosed = '{"passage": "Metformin changes hepatic lipid storage in diabetes'  # not cut
    llm = (
        ScriptedLLM()
        .on("design distractor passages", guidance)
        .on("write one distractor", [cut, unclosed])
    )
    out = generate_distractors(llm, QUESTION, ANSWER, GOLD, _key("30", "percent"), [_p(1)], 2)
    ((text, _),) = out.accepted  # then validated as any other
    assert text.startswith(first) and text.endswith("treated mice.")
    assert len(text.split()) < 220  # the sentence the cut went through is dropped
    assert out.salvaged == 1
    assert [r.reason for _, _, r in out.rejected] == ["parse_failure"]  # the short unclosed one
