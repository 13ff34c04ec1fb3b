"""Steps 4-5: candidate contexts for one question.

- **Base**: the retriever's ranking in order, cut to ``total`` (30); a gold passage the
  retriever missed replaces the lowest-ranked non-gold candidate, so the gold is always
  among the candidates.
- **SSLI**: the LLM writes guidance items ``{DocID, TargetType, MainIdea,
  AnswerAvoidance}`` from the question, gold answer and top-3 contexts, then one
  distractor per item. Each distractor is validated (:func:`check_distractor`); a
  failure is regenerated with the rejection reason as feedback up to ``retries`` times,
  then dropped. After a ``contains_answer`` rejection the retry does not show the gold
  answer (small models copy it into the passage, and greedy decoding repeats the same
  copy), so the distractor comes from the question and the guidance alone. The
  accepted distractors replace the lowest-ranked non-gold Base candidates and are
  appended at the end (as in the paper's Figure 8), keeping 30.
- **Hard negatives** (no LLM): passages the retriever ranks highest for the gold
  passage's own text, excluding the gold documents and the kept Base candidates.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any

from sciera.datasets.ssli.validate import (
    AnswerKey,
    Rejection,
    check_no_answer,
    check_not_duplicate_distractor,
    check_not_meta,
    check_not_near_duplicate,
    check_not_repetitive,
    check_on_topic,
)
from sciera.types import Candidate, Passage, Ranking

if TYPE_CHECKING:
    from sciera.llm.base import LLM
    from sciera.retrieve.base import Retriever

GUIDANCE_PROMPT = "ssli_guidance"
DISTRACTOR_PROMPT = "ssli_distractor"
TARGET_TYPES = ("misleading", "background", "irrelevant")
SALVAGED = "cut by the token limit; its whole sentences were kept"
HARD_NEGATIVE = "hard_negative"

GUIDANCE_SCHEMA: dict[str, Any] = {
    "type": "object",
    "properties": {
        "guidance": {
            "type": "array",
            "minItems": 1,
            "maxItems": 8,
            "items": {
                "type": "object",
                "properties": {
                    "DocID": {"type": "integer"},
                    "TargetType": {"type": "string", "enum": list(TARGET_TYPES)},
                    "MainIdea": {"type": "string", "maxLength": 300},
                    "AnswerAvoidance": {"type": "string", "maxLength": 300},
                },
                "required": ["DocID", "TargetType", "MainIdea", "AnswerAvoidance"],
            },
        }
    },
    "required": ["guidance"],
}
DISTRACTOR_SCHEMA: dict[str, Any] = {
    "type": "object",
    "properties": {"passage": {"type": "string", "maxLength": 1200}},
    "required": ["passage"],
}

Cosine = Callable[[str, Sequence[str]], list[float]]
"""``cosine(anchor, texts)``: embedding cosine of each text with the anchor."""


@dataclass(frozen=True, slots=True)
class Guidance:
    doc_id: int
    target_type: str
    main_idea: str
    avoidance: str

    def to_dict(self) -> dict[str, Any]:
        return {
            "DocID": self.doc_id,
            "TargetType": self.target_type,
            "MainIdea": self.main_idea,
            "AnswerAvoidance": self.avoidance,
        }


@dataclass(frozen=True, slots=True)
class DistractorRules:
    """Validation thresholds (see :mod:`sciera.datasets.ssli.validate`)."""

    min_overlap: float = 0.2
    min_cosine: float = 0.3
    max_jaccard: float = 0.6
    max_cosine: float = 0.95


@dataclass
class DistractorOutcome:
    guidance: list[Guidance] = field(default_factory=list)
    accepted: list[tuple[str, Guidance]] = field(default_factory=list)
    rejected: list[tuple[str, Guidance, Rejection]] = field(default_factory=list)
    error: str = ""
    salvaged: int = 0  # replies cut by the token limit whose whole sentences were used


# -- Base ---------------------------------------------------------------------------------


def base_candidates(ranking: Ranking, gold: Sequence[Passage], total: int = 30) -> list[Candidate]:
    """The first ``total`` retrieved passages with every gold passage guaranteed in."""
    if len(gold) > total:
        raise ValueError(f"{len(gold)} gold passages do not fit in {total} candidates")
    gold_ids = {g.passage_id for g in gold}
    passages = [item.passage for item in ranking.items][:total]
    for g in gold:
        if g.passage_id in {p.passage_id for p in passages}:
            continue
        if len(passages) < total:
            passages.append(g)
            continue
        victim = max(i for i, p in enumerate(passages) if p.passage_id not in gold_ids)
        passages[victim] = g
    return [Candidate(p.passage_id, p.contents) for p in passages]


def inject(
    base: Sequence[Candidate], extra: Sequence[Candidate], gold_ids: set[str], total: int = 30
) -> list[Candidate]:
    """Drop the lowest-ranked non-gold Base candidates so ``extra`` fits, then append it."""
    keep = list(base)
    while len(keep) + len(extra) > total:
        victims = [i for i, c in enumerate(keep) if c.passage_id not in gold_ids]
        if not victims:
            break
        keep.pop(victims[-1])
    return keep + list(extra)[: max(0, total - len(keep))]


# -- SSLI with the LLM --------------------------------------------------------------------


def write_guidance(
    llm: LLM, question: str, answer: str, contexts: Sequence[Passage], n: int
) -> tuple[list[Guidance], str]:
    """Guidance items (at most ``n``) or ([], error)."""
    from sciera.llm.prompting import delimit, delimit_passages, load_prompt

    messages = load_prompt(GUIDANCE_PROMPT).render(
        question=delimit(question, "question"),
        answer=delimit(answer, "answer"),
        contexts=delimit_passages(list(contexts), label="context"),
        n=n,
    )
    result = llm.complete_json(messages, GUIDANCE_SCHEMA, max_tokens=120 * n + 60)
    if not result.ok or result.value is None:
        return [], result.failure.error if result.failure else "no value"
    items = []
    for raw in result.value.get("guidance") or []:
        kind = str(raw.get("TargetType", "")).strip().lower()
        if kind not in TARGET_TYPES:
            continue
        items.append(
            Guidance(
                int(raw.get("DocID", 0) or 0),
                kind,
                str(raw.get("MainIdea", "")).strip(),
                str(raw.get("AnswerAvoidance", "")).strip(),
            )
        )
    return items[:n], "" if items else "no usable guidance item"


def write_distractor(
    llm: LLM,
    question: str,
    answer: str,
    guidance: Guidance,
    feedback: str = "",
    *,
    show_answer: bool = True,
) -> tuple[str | None, str]:
    """One distractor text, or (None, error). ``show_answer=False`` leaves the gold
    answer out of the prompt (its block says "(withheld)"). A text salvaged from a reply
    cut by the token limit comes with the note :data:`SALVAGED` in place of an error."""
    from sciera.llm.parsing import salvage_cut_field
    from sciera.llm.prompting import delimit, load_prompt

    block = (
        f"TargetType: {guidance.target_type}\nMainIdea: {guidance.main_idea}\n"
        f"AnswerAvoidance: {guidance.avoidance}"
    )
    messages = load_prompt(DISTRACTOR_PROMPT).render(
        question=delimit(question, "question"),
        answer=delimit(answer if show_answer else "(withheld)", "answer"),
        guidance=delimit(block, "guidance"),
        feedback=feedback,
    )
    result = llm.complete_json(messages, DISTRACTOR_SCHEMA, max_tokens=220)
    if not result.ok or result.value is None:
        # A passage cut by the token limit keeps its whole sentences and is then validated
        # like any other: 7 of the first 12 distractors of a 1.5B build ran past the limit.
        reply = result.completion
        kept = salvage_cut_field(reply.text, "passage", reply.finish_reason)
        if kept is None:
            return None, result.failure.error if result.failure else "no value"
        return kept, SALVAGED
    text = " ".join(str(result.value.get("passage", "")).split())
    return (text, "") if text else (None, "empty passage")


def check_distractor(
    text: str,
    question: str,
    gold_text: str,
    key: AnswerKey,
    rules: DistractorRules = DistractorRules(),
    cosine: Cosine | None = None,
    accepted: Sequence[str] = (),
) -> Rejection | None:
    """The distractor rules in order: no meta text, no repeated sentence, no answer,
    on-topic floor, near-duplicate of gold, duplicate of an ``accepted`` distractor."""
    cheap = check_not_meta(text) or check_not_repetitive(text)
    if cheap is not None:
        return cheap
    q_cos = g_cos = None
    if cosine is not None:
        q_cos = cosine(question, [text])[0]
        g_cos = cosine(gold_text, [text])[0]
    return (
        check_no_answer(text, key)
        or check_on_topic(
            text, question, cosine=q_cos, min_overlap=rules.min_overlap, min_cosine=rules.min_cosine
        )
        or check_not_near_duplicate(
            text,
            gold_text,
            cosine=g_cos,
            max_jaccard=rules.max_jaccard,
            max_cosine=rules.max_cosine,
        )
        or check_not_duplicate_distractor(text, accepted, max_jaccard=rules.max_jaccard)
    )


def generate_distractors(
    llm: LLM,
    question: str,
    answer: str,
    gold_text: str,
    key: AnswerKey,
    contexts: Sequence[Passage],
    n: int,
    *,
    retries: int = 1,
    rules: DistractorRules = DistractorRules(),
    cosine: Cosine | None = None,
) -> DistractorOutcome:
    """Guidance, then up to ``n`` validated distractors (each retried ``retries`` times)."""
    out = DistractorOutcome()
    out.guidance, out.error = write_guidance(llm, question, answer, contexts, n)
    if not out.guidance:
        return out
    for slot in range(n):
        item = out.guidance[slot % len(out.guidance)]
        feedback = "" if slot < len(out.guidance) else f"Write variant {slot + 1}."
        show_answer = True
        for _attempt in range(retries + 1):
            text, error = write_distractor(
                llm, question, answer, item, feedback, show_answer=show_answer
            )
            if text is None:
                out.rejected.append(("", item, Rejection("parse_failure", error)))
                break
            out.salvaged += error == SALVAGED
            done = [t for t, _ in out.accepted]
            rejection = check_distractor(text, question, gold_text, key, rules, cosine, done)
            if rejection is None:
                out.accepted.append((text, item))
                break
            out.rejected.append((text, item, rejection))
            if rejection.reason == "contains_answer":
                show_answer = False
                feedback = (
                    "A previous attempt was rejected because it repeated the gold answer, "
                    "which is withheld now. Write a new passage from the question and the "
                    "guidance only; do not restate any finding that answers the question."
                )
            else:
                feedback = (
                    f"A previous attempt was rejected ({rejection.reason}: "
                    f"{rejection.detail}). Write a different passage that fixes this."
                )
                if rejection.reason == "meta_text":
                    feedback += (
                        " Write it as an abstract reporting its own methods and findings; "
                        "never say what a context, question or answer does or does not say."
                    )
    return out


def distractor_candidates(question_id: str, accepted: Sequence[tuple[str, str]]) -> list[Candidate]:
    """``(text, target_type)`` pairs -> candidates ``ssli:<question id>:<n>`` (n from 1)."""
    return [
        Candidate(f"ssli:{question_id}:{n}", text, is_distractor=True, distractor_type=kind)
        for n, (text, kind) in enumerate(accepted, start=1)
    ]


# -- hard negatives (no LLM) --------------------------------------------------------------


def mine_hard_negatives(
    retriever: Retriever,
    gold: Sequence[Passage],
    exclude_ids: set[str],
    n: int,
    depth: int = 100,
) -> list[Candidate]:
    """Top passages for the gold passages' own text that are not gold and not excluded."""
    gold_docs = {g.doc_id for g in gold}
    seen = set(exclude_ids)
    rankings = retriever.search_many([g.contents for g in gold], depth)
    found: list[Candidate] = []
    for depth_i in range(depth):  # interleave the gold passages' rankings
        for ranking in rankings:
            if depth_i >= len(ranking.items) or len(found) >= n:
                continue
            p = ranking.items[depth_i].passage
            if p.doc_id in gold_docs or p.passage_id in seen:
                continue
            seen.add(p.passage_id)
            found.append(Candidate(p.passage_id, p.contents, True, HARD_NEGATIVE))
    return found
