"""Spliced negatives: SSLI-style hard negatives made from a training query's own gold
passage, with no LLM.

An SSLI distractor opens on the question's topic and then says something that does not
answer it (DeepEra: *background*, *misleading*). Two such passages are cut from real text:

* ``background``: the opening sentences of the gold passage (its background), without the
  second half of the passage (where results and conclusions sit) and without the sentences
  that share the most content words with the query (the likeliest answer);
* ``spliced``: that same opening followed by the second half of one of the query's mined
  hard negatives, a different study's results and conclusions.

Both share the gold passage's topic and vocabulary, so a model that scores topical
similarity ranks them with the gold passage; one that checks whether the passage answers
ranks them below it. They are made for training queries only (never dev, whose metrics
stay on real candidates) and only from passages the split guard already let in.
Deterministic for a seed.
"""

from __future__ import annotations

import random
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, replace
from typing import Any

from sciera.train.data import TrainQuery

MIN_SENTENCES = 4  # a shorter passage has no background to cut
ANSWER_LIKE = 2  # sentences with the most query words never go into a negative
NEGATIVE_POOL = 10  # the spliced tail comes from one of the query's first N mined negatives


@dataclass
class Spliced:
    train: list[TrainQuery]
    texts: dict[str, str]
    card: dict[str, Any]


def sentences(text: str) -> tuple[list[str], str]:
    """(sentences, joiner): the sentences of ``text`` as substrings of it, also where a full
    stop glues two together ("disease.Recent", as in SciFact's abstracts), and the joiner
    that puts them back the way ``text`` writes them, so a negative carries no spacing cue
    its gold passage lacks."""
    from sciera.corpus.sentences import split_sentences
    from sciera.datasets.ssli.validate import GLUED_SENTENCE

    out: list[str] = []
    glued = False
    for sent in split_sentences(text):
        start = 0
        for m in GLUED_SENTENCE.finditer(sent):
            out.append(sent[start : m.end()])
            start, glued = m.end(), True
        out.append(sent[start:])
    return [s for s in out if s.strip()], "" if glued else " "


def background(query: str, passage: str) -> str | None:
    """The opening of ``passage`` without its answer-like sentences, or None if too short."""
    return _opening(query, *sentences(passage))


def _opening(query: str, sents: list[str], joiner: str) -> str | None:
    from sciera.datasets.ssli.validate import content_words

    if len(sents) < MIN_SENTENCES:
        return None
    asked = set(content_words(query))
    if not asked:
        return None
    overlap = [len(asked & set(content_words(s))) / len(asked) for s in sents]
    ranked = sorted(range(len(sents)), key=lambda i: (-overlap[i], i))
    answer_like = set(ranked[:ANSWER_LIKE])
    opening = [s for i, s in enumerate(sents[: max(1, len(sents) // 3)]) if i not in answer_like]
    return joiner.join(opening) or None


def tail(passage: str) -> str | None:
    """The second half of ``passage``'s sentences (results, conclusions), or None."""
    sents, joiner = sentences(passage)
    if len(sents) < 2:
        return None
    return joiner.join(sents[len(sents) // 2 :])


def make(
    records: Sequence[TrainQuery], texts: Mapping[str, str], per_query: int, seed: int = 0
) -> Spliced:
    """Up to ``per_query`` negatives per record (one ``background``, the rest ``spliced``
    with different mined negatives), added to each record's ``hard`` negatives."""
    if per_query < 1:
        raise ValueError(f"per_query must be >= 1, got {per_query}")
    rng = random.Random(seed)
    out: list[TrainQuery] = []
    made: dict[str, str] = {}
    counts = {"background": 0, "spliced": 0, "queries": 0, "skipped_short_gold": 0}
    for rec in records:
        gold = texts.get(rec.positives[0], "") if rec.positives else ""
        sents, joiner = sentences(gold)
        opening = _opening(rec.text, sents, joiner)
        if opening is None:
            counts["skipped_short_gold"] += 1
            out.append(rec)
            continue
        ids = [f"spliced:{rec.qid}:0"]
        made[ids[0]] = opening
        counts["background"] += 1
        tails = [t for pid in rec.negatives[:NEGATIVE_POOL] if (t := tail(texts.get(pid, "")))]
        for k, end in enumerate(rng.sample(tails, min(per_query - 1, len(tails))), start=1):
            ids.append(f"spliced:{rec.qid}:{k}")
            made[ids[-1]] = opening + joiner + end
            counts["spliced"] += 1
        counts["queries"] += 1
        out.append(replace(rec, hard=(*rec.hard, *ids)))
    card = {"per_query": per_query, "seed": seed, **counts}
    return Spliced(out, made, card)
