"""Spliced negatives: cut from a training query's gold passage (its background, and that
background followed by a mined negative's results), never from its answer-like sentences,
written the way the source text writes its sentences, deterministic for a seed."""

from __future__ import annotations

import random

import pytest

from sciera.train import spliced_negatives as sp
from sciera.train.ce_fit import make_groups
from sciera.train.data import TrainQuery
from sciera.train.prepare import DataSpec

GOLD = (
    "Statins are widely prescribed drugs. Their side effects are debated. "
    "We randomised 200 adults to placebo or drug. Atorvastatin lowered muscle strength "
    "in older adults. Strength fell by ten percent in a year. "
    "Statins therefore weaken muscle in the elderly."
)
OTHER = (
    "Sleep shapes memory. We studied mice. Rapid eye movement sleep was cut short. "
    "Spatial memory declined without it. Sleep loss impairs recall."
)
QUERY = "Atorvastatin lowers muscle strength in older adults."


def test_sentences_split_glued_full_stops_and_keep_the_source_spacing():
    glued = "Background is known.We tested it.Results were 0.29 higher."
    sents, joiner = sp.sentences(glued)
    assert sents == ["Background is known.", "We tested it.", "Results were 0.29 higher."]
    assert joiner == ""
    assert joiner.join(sents) == glued
    sents, joiner = sp.sentences(GOLD)
    assert len(sents) == 6 and joiner == " "


def test_background_is_the_opening_without_answer_like_sentences():
    got = sp.background(QUERY, GOLD)
    assert got == "Statins are widely prescribed drugs. Their side effects are debated."
    assert "Atorvastatin" not in got
    # a query whose words sit in the opening loses those sentences
    got = sp.background("Statins side effects are debated", GOLD)
    assert got is None or "debated" not in got
    assert sp.background(QUERY, "One. Two. Three.") is None  # too short to cut


def test_tail_is_the_second_half():
    assert sp.tail(OTHER) == (
        "Rapid eye movement sleep was cut short. Spatial memory declined without it. "
        "Sleep loss impairs recall."
    )
    assert sp.tail("Only one sentence.") is None


def _record(qid: str = "q1") -> TrainQuery:
    return TrainQuery(
        qid=qid,
        text=QUERY,
        positives=("gold#0",),
        candidates=(("gold#0", 9.0), ("other#0", 5.0), ("third#0", 4.0)),
        gold_docs=frozenset({"gold"}),
        hard=("ssli:q1:1",),
    )


TEXTS = {"gold#0": GOLD, "other#0": OTHER, "third#0": OTHER.replace("mice", "rats")}


def test_make_adds_background_and_spliced_negatives_after_existing_hard_ones():
    got = sp.make([_record()], TEXTS, per_query=2, seed=0)
    (rec,) = got.train
    assert rec.hard[0] == "ssli:q1:1"  # the LLM-written distractor keeps its place
    assert rec.hard[1:] == ("spliced:q1:0", "spliced:q1:1")
    opening = sp.background(QUERY, GOLD)
    assert got.texts["spliced:q1:0"] == opening
    spliced = got.texts["spliced:q1:1"]
    assert spliced.startswith(opening + " ") and spliced.endswith("impairs recall.")
    assert got.card == {
        "per_query": 2,
        "seed": 0,
        "background": 1,
        "spliced": 1,
        "queries": 1,
        "skipped_short_gold": 0,
    }
    # the groups carry them as negatives, never as the positive
    (group,) = make_groups(got.train, negatives=4, rng=random.Random(0))
    assert group[1][0] == "gold#0"
    assert set(group[1][1:4]) == {"ssli:q1:1", "spliced:q1:0", "spliced:q1:1"}


def test_make_is_seeded_and_skips_short_gold_passages():
    a = sp.make([_record()], TEXTS, per_query=2, seed=3)
    b = sp.make([_record()], TEXTS, per_query=2, seed=3)
    assert a.texts == b.texts
    short = sp.make([_record()], {**TEXTS, "gold#0": "Too short. Two."}, per_query=2)
    assert short.train == [_record()] and short.texts == {}
    assert short.card["skipped_short_gold"] == 1
    with pytest.raises(ValueError):
        sp.make([_record()], TEXTS, per_query=0)


def test_data_spec_refuses_a_negative_count():
    with pytest.raises(ValueError, match="spliced"):
        DataSpec(corpus="c", queries="q", qrels="r", spliced_negatives=-1)
