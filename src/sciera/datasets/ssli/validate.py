"""Rejection rules for generated questions and distractors.

Each rule is a small function returning ``None`` (accepted) or a :class:`Rejection`
whose ``reason`` is a short stable string (counted in ``stats.json``) and whose
``detail`` says what triggered it.

Text comparison works on *content words*: SQuAD-normalized tokens
(:func:`sciera.text.normalize_text`: lowercase, ASCII punctuation
and articles removed) minus a small English stopword list, each reduced to its
Snowball stem (PyStemmer), so "increased" in an answer matches "increases" in the
passage.

Rules and their defaults (all thresholds are keyword arguments):

- ``self_reference``: the question points at its source ("this passage", "the study",
  "the authors", "our results" ...) instead of being self-contained (Figure 10).
- ``underspecified``: the question names no subject that singles out a few documents
  ("What was the result of the meta-analysis?"); corpus-grounded, in :mod:`.specificity`.
- ``answer_in_question``: the answer has no *answer word* (:func:`answer_words`): every
  content word is in the question or only describes the reporting ("We found that RACK1
  binds ..." for "How does RACK1 bind ...?"), so it restates the question.
- ``answer_unsupported``: fewer than ``min_share`` (0.6) of the answer's content words
  occur in the source passage. An answer without content words is rejected too.
- ``duplicate_question``: the normalized question text was already accepted.
- ``contains_answer``: the distractor contains the gold answer's *key span* (see
  :func:`key_span`) as a contiguous run of normalized tokens, or restates the answer:
  it has a run of ``min_run`` (6) consecutive key-span tokens holding two answer words, or
  at least ``max_share`` (0.6) of the answer's distinct *answer words* (:func:`answer_words`)
  when there are at least ``min_words`` (3), or all of them when there are fewer. Long
  answers copied from the passage made whole-span matching too strict: about 30% of the
  distractors a 1.5B build accepted under it repeated the answer with a word changed ("It
  found that these variants may regulate ..." for "These data suggest that IGF-I splice
  variants may regulate ..."). With a share of 0.8 and nothing for answers of one or two
  answer words, 22 of the 168 distractors of the SciFact set still stated the answer
  ("RAD52 facilitates the repair ..." for "RAD52 facilitates mitotic DNA synthesis";
  "We found that 29% of patients ..." when the source words the 29% differently).
- ``off_topic``: the distractor is far from the question: the share of the question's
  content words it contains is below ``min_overlap`` (0.2) and, when an embedding cosine
  is given, the cosine is below ``min_cosine`` (0.3) too (close on either is enough).
- ``near_duplicate_gold``: content-word Jaccard with the gold passage >= ``max_jaccard``
  (0.6), or embedding cosine >= ``max_cosine`` (0.95) when given.
- ``meta_text``: the distractor talks about the benchmark instead of science ("the
  retrieved context does not provide any information about ...", "the gold answer"):
  a passage no abstract would contain, which gives itself away. The 1.5B wrote such
  text for about half of its first distractors.
- ``repetitive``: a sentence occurs twice (a generation loop).
- ``duplicate_distractor``: content-word Jaccard >= ``max_jaccard`` with a distractor
  already accepted for the same question.
"""

from __future__ import annotations

import re
from collections.abc import Sequence
from dataclasses import dataclass
from functools import lru_cache

from sciera.text import normalize_text

_STOPWORD_TEXT = """
    a an the and or but if of to in on at by for with from as into onto than then that this
    these those is are was were be been being am do does did done has have had having it its
    which who whom whose what when where why how not no nor so such can could may might must
    shall should will would also about after before between both each more most other some
    any all only own same very there their they them we our us you your he she his her i me
    my one two per via within without over under up down out off again further once here
    during while whether either neither"""
STOPWORDS = frozenset(_STOPWORD_TEXT.split())

_SOURCE_NOUNS = (
    r"passages?|stud(?:y|ies)|paper|article|abstract|text|excerpt|document|authors?|"
    r"researchers|investigators"
)
_GENERIC_NOUNS = r"work|report|research|experiments?|trial|analysis|findings|results|data"
_SELF_REFERENCE = re.compile(
    rf"\b(?:this|these|that|present|current|our|the)\s+(?:{_SOURCE_NOUNS})\b"
    rf"|\b(?:this|these|present|current|our)\s+(?:{_GENERIC_NOUNS})\b"
    r"|\b(?:mentioned|described|discussed|presented)\s+(?:above|here|herein)\b"
    r"|\bthe\s+given\s+\w+",
    re.I,
)

_META = re.compile(
    r"\b(?:retrieved|given|provided|above)\s+(?:contexts?|passages?|documents?)\b"
    r"|\bgold(?:en)?\s+answer\b|\bthe\s+(?:question|answer)\s+(?:asks|is|was)\b"
    r"|\bno\s+(?:specific\s+)?information\s+(?:about|on|regarding)\b"
    r"|\b(?:does|do|did|is|are|was|were)\s+not\s+(?:explicitly\s+)?"
    r"(?:provide|address|mention|answer|state|discuss|describe|specif(?:y|ied)|imply)(?:d|ed)?\b"
    r"|\b(?:unrelated|irrelevant|not\s+relevant)\s+to\s+the\s+(?:question|query|answer)\b",
    re.I,
)

REASONS = (
    "self_reference",
    "underspecified",
    "answer_in_question",
    "answer_unsupported",
    "duplicate_question",
    "contains_answer",
    "off_topic",
    "near_duplicate_gold",
    "meta_text",
    "repetitive",
    "duplicate_distractor",
)


@dataclass(frozen=True, slots=True)
class Rejection:
    reason: str  # one of REASONS (or a step-specific reason such as "parse_failure")
    detail: str = ""


@lru_cache(maxsize=1)
def _stemmer():  # type: ignore[no-untyped-def]
    import Stemmer

    return Stemmer.Stemmer("english")


# a full stop between a word and the next sentence's first character with no space, as
# SciFact joins an abstract's sentences ("...tumors.29% of patients"): normalization alone
# would glue the two words into one token ("tumors29"); decimals ("0.29") are left alone
GLUED_SENTENCE = re.compile(r"(?<=[A-Za-z)\]%])\.(?=[A-Z0-9(])")


def tokens(text: str) -> list[str]:
    """SQuAD-normalized tokens (articles and punctuation gone), glued sentences apart."""
    return normalize_text(GLUED_SENTENCE.sub(". ", text)).split()


def content_words(text: str) -> list[str]:
    """Stems of the normalized tokens that are not stopwords, in order."""
    words = [t for t in tokens(text) if t not in STOPWORDS]
    return list(_stemmer().stemWords(words)) if words else []


def answer_support(answer: str, passage: str) -> float:
    """Share of the answer's content words (stems) that occur in ``passage``; 0 if none."""
    words = content_words(answer)
    if not words:
        return 0.0
    present = set(content_words(passage))
    return sum(1 for w in words if w in present) / len(words)


def jaccard(a: str, b: str) -> float:
    sa, sb = set(content_words(a)), set(content_words(b))
    if not sa and not sb:
        return 1.0
    return len(sa & sb) / len(sa | sb)


def question_overlap(question: str, text: str) -> float:
    """Share of the question's distinct content words present in ``text``."""
    q = set(content_words(question))
    if not q:
        return 0.0
    return len(q & set(content_words(text))) / len(q)


def _runs(seq: Sequence[str], sub: Sequence[str]) -> bool:
    n = len(sub)
    return n > 0 and any(list(seq[i : i + n]) == list(sub) for i in range(len(seq) - n + 1))


# words of a generated answer that describe the reporting, not the finding
_REPORTING_TEXT = """study studies studied result results finding findings found find show shows
    showed shown demonstrate demonstrated demonstrates involve involved involves use used
    using aim aimed aims investigate investigated investigates provide provides provided
    suggest suggests suggested indicate indicated indicates method methods significance
    purpose research researchers authors paper report reports reported reveal reveals
    revealed summarize summarizes summarized describe describes described uncover uncovers
    uncovered analysis conclude concludes concluded recent recently identify identifies
    identified discover discovers discovered examine examines examined evaluate evaluates
    evaluated assess assesses assessed explore explores explored"""
_REPORTING_WORDS = frozenset(_REPORTING_TEXT.split())


@lru_cache(maxsize=1)
def _reporting_stems() -> frozenset[str]:
    return frozenset(_stemmer().stemWords(sorted(_REPORTING_WORDS)))


def answer_words(answer: str, question: str = "") -> frozenset[str]:
    """Stems of the answer's content words that the question does not have and that do
    not describe the reporting: what the answer adds to the question."""
    asked = set(content_words(question))
    reporting = _reporting_stems()
    return frozenset(w for w in content_words(answer) if w not in asked and w not in reporting)


@dataclass(frozen=True, slots=True)
class AnswerKey:
    """What a distractor must not contain: the key span and the answer words."""

    span: tuple[str, ...]
    words: frozenset[str]


def answer_key(answer: str, passage: str, question: str = "") -> AnswerKey:
    return AnswerKey(key_span(answer, passage, question), answer_words(answer, question))


def key_span(answer: str, passage: str, question: str = "") -> tuple[str, ...]:
    """The gold answer's key span: the longest run of consecutive normalized answer tokens
    that also occurs contiguously in the source passage and holds at least one *answer
    word*: a content word whose stem is not in the question and does not describe the
    reporting ("study", "found", "used" ...). Words the question already has are the
    topic, which a distractor is meant to share; a span made of them alone would make
    every on-topic distractor "contain the answer". A one-token span counts only if it
    contains a digit (a number such as "720"). Without such a run, the whole normalized
    answer when it has at most 4 tokens and an answer word, else ().
    """
    ans, src = tokens(answer), tokens(passage)
    asked = set(content_words(question))
    stem = _stemmer().stemWord

    def has_answer_word(span: Sequence[str]) -> bool:
        return any(
            t not in STOPWORDS and t not in _REPORTING_WORDS and stem(t) not in asked for t in span
        )

    best: tuple[str, ...] = ()
    for i in range(len(ans)):
        for j in range(len(ans), i, -1):
            if j - i <= len(best):
                break
            span = ans[i:j]
            if not has_answer_word(span):
                continue
            if len(span) == 1 and not any(c.isdigit() for c in span[0]):
                continue
            if _runs(src, span):
                best = tuple(span)
                break
    if not best and 0 < len(ans) <= 4 and has_answer_word(ans):
        best = tuple(ans)
    return best


# -- question rules ----------------------------------------------------------------------


def check_self_contained(question: str) -> Rejection | None:
    match = _SELF_REFERENCE.search(question)
    if match:
        return Rejection("self_reference", f"refers to its source: {match.group(0)!r}")
    return None


def check_answer_supported(
    answer: str, passage: str, *, min_share: float = 0.6
) -> Rejection | None:
    share = answer_support(answer, passage)
    if share < min_share:
        return Rejection(
            "answer_unsupported", f"{share:.2f} of answer content words in source < {min_share}"
        )
    return None


def check_answer_adds_content(question: str, answer: str) -> Rejection | None:
    """Rejects an answer that adds nothing to the question but reporting words ("What is
    the purpose of the trial of X?" -> "The study involved a trial of X."): it restates
    instead of answering."""
    if not answer_words(answer, question):
        return Rejection(
            "answer_in_question",
            "every answer content word is in the question or describes the reporting",
        )
    return None


def question_key(question: str) -> str:
    """What duplicates are compared on: the SQuAD-normalized question text."""
    return normalize_text(question)


def check_duplicate(question: str, seen: set[str]) -> Rejection | None:
    """Rejects a question whose normalized text is in ``seen`` (the caller adds accepted ones)."""
    if question_key(question) in seen:
        return Rejection("duplicate_question", question_key(question))
    return None


# -- distractor rules --------------------------------------------------------------------


def check_no_answer_span(distractor: str, span: Sequence[str]) -> Rejection | None:
    if span and _runs(tokens(distractor), span):
        return Rejection("contains_answer", f"contains key span {' '.join(span)!r}")
    return None


def check_no_answer(
    distractor: str,
    key: AnswerKey,
    *,
    min_run: int = 6,
    max_share: float = 0.6,
    min_words: int = 3,
) -> Rejection | None:
    """``contains_answer``: the key span, a ``min_run``-token run of it holding two answer
    words, ``max_share`` of the answer words (when the answer has ``min_words``) or all of
    them (when it has fewer)."""
    whole = check_no_answer_span(distractor, key.span)
    if whole is not None:
        return whole
    text = tokens(distractor)
    stem = _stemmer().stemWord
    for i in range(len(key.span) - min_run + 1):
        run = key.span[i : i + min_run]
        if sum(stem(t) in key.words for t in run) >= 2 and _runs(text, run):
            return Rejection("contains_answer", f"repeats the answer's {' '.join(run)!r}")
    if key.words:
        share = len(key.words & set(content_words(distractor))) / len(key.words)
        if share >= (max_share if len(key.words) >= min_words else 1.0):
            return Rejection(
                "contains_answer", f"has {share:.0%} of the answer's words (>= {max_share:.0%})"
            )
    return None


def check_on_topic(
    distractor: str,
    question: str,
    *,
    cosine: float | None = None,
    min_overlap: float = 0.2,
    min_cosine: float = 0.3,
) -> Rejection | None:
    overlap = question_overlap(question, distractor)
    if overlap >= min_overlap or (cosine is not None and cosine >= min_cosine):
        return None
    shown = "n/a" if cosine is None else f"{cosine:.2f}"
    return Rejection("off_topic", f"question overlap {overlap:.2f} < {min_overlap}, cosine {shown}")


def check_not_near_duplicate(
    distractor: str,
    gold: str,
    *,
    cosine: float | None = None,
    max_jaccard: float = 0.6,
    max_cosine: float = 0.95,
) -> Rejection | None:
    jac = jaccard(distractor, gold)
    if jac >= max_jaccard:
        return Rejection("near_duplicate_gold", f"jaccard with gold {jac:.2f} >= {max_jaccard}")
    if cosine is not None and cosine >= max_cosine:
        return Rejection("near_duplicate_gold", f"cosine with gold {cosine:.2f} >= {max_cosine}")
    return None


def check_not_meta(distractor: str) -> Rejection | None:
    match = _META.search(distractor)
    if match:
        return Rejection("meta_text", f"talks about the benchmark: {match.group(0)!r}")
    return None


def check_not_repetitive(distractor: str) -> Rejection | None:
    from sciera.corpus.sentences import split_sentences

    seen: set[str] = set()
    for sentence in split_sentences(distractor):
        key = normalize_text(sentence)
        if key and key in seen:
            return Rejection("repetitive", f"repeats the sentence {sentence.strip()[:60]!r}")
        seen.add(key)
    return None


def check_not_duplicate_distractor(
    distractor: str, accepted: Sequence[str], *, max_jaccard: float = 0.6
) -> Rejection | None:
    for other in accepted:
        jac = jaccard(distractor, other)
        if jac >= max_jaccard:
            return Rejection(
                "duplicate_distractor",
                f"jaccard with an accepted distractor {jac:.2f} >= {max_jaccard}",
            )
    return None
