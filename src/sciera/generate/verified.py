"""Yes/no answers decided by the verifier: the decision comes from the overall verdict, the
prose (if any) is written given that decision, so the two cannot disagree.

    SUPPORT -> yes, CONTRADICT -> no, CONFLICTING -> maybe, NOT ENOUGH INFO -> maybe

With ``allow_maybe=False`` (yes/no-only benchmarks) a verdict that is not decisive still
picks yes or no: the side the most confident abstract leans to (P(SUPPORT) vs
P(CONTRADICT)). The evidence records carry the rationale sentences of their abstracts;
the answer cites the abstracts its decision rests on (for "maybe": the closest ones), and
each citation names the sentences.

:class:`VerdictGenerator` (registry name ``verdict``) answers with the decision and the
quoted rationale sentences alone: no LLM call (``sciera ask --decision-only``, fast yes/no
benchmarks). Other question types get no answer from it (a degraded answer says so).
"""

from __future__ import annotations

import re
from collections.abc import Sequence
from typing import TYPE_CHECKING, Any

from sciera.types import (
    CONFLICTING,
    CONTRADICT,
    NOT_ENOUGH_INFO,
    SUPPORT,
    VERDICT_LABELS,
    Answer,
    Citation,
    Evidence,
    Verification,
)

if TYPE_CHECKING:
    from sciera.settings import Settings

DECISIONS = {SUPPORT: "yes", CONTRADICT: "no", CONFLICTING: "maybe", NOT_ENOUGH_INFO: "maybe"}
QUOTE_WORDS = 60
"""Words of a rationale sentence quoted in a decision-only answer (the rest: ``...``)."""


def decide(v: Verification, allow_maybe: bool = True) -> str:
    """yes / no / maybe from the overall verdict (yes or no only: the stronger lean)."""
    decision = DECISIONS[v.label]
    if decision != "maybe" or allow_maybe:
        return decision
    s, c = VERDICT_LABELS.index(SUPPORT), VERDICT_LABELS.index(CONTRADICT)
    best = max(v.verdicts, key=lambda a: max(a.probs[s], a.probs[c]), default=None)
    if best is None:
        return "yes"
    return "yes" if best.probs[s] >= best.probs[c] else "no"


_LEAD = re.compile(r"^\W*(yes|no|maybe)\s*[,.:;!]", re.IGNORECASE)


def opposes(explanation: str, decision: str) -> bool:
    """Whether an explanation opens with another decision than ``decision`` ("No, ..." under
    a yes): it would contradict the verdict it explains."""
    lead = _LEAD.match(explanation)
    return lead is not None and lead.group(1).lower() != decision


def grounds(v: Verification, evidence: Sequence[Evidence], decision: str) -> list[int]:
    """1-based evidence numbers the decision rests on: the abstracts on its side (both
    sides when conflicting), else the closest abstracts (the two best-ranked read)."""
    if v.label == CONFLICTING:
        docs = set(v.supporting) | set(v.contradicting)
    elif decision == "yes":
        docs = set(v.supporting) or {a.doc_id for a in v.verdicts if a.label == SUPPORT}
    elif decision == "no":
        docs = set(v.contradicting) or {a.doc_id for a in v.verdicts if a.label == CONTRADICT}
    else:
        docs = set()
    picked = [i + 1 for i, e in enumerate(evidence) if e.passage.doc_id in docs and e.rationales]
    if picked:
        return picked
    return [i + 1 for i, e in enumerate(evidence) if e.rationales][:2] or [
        i + 1 for i in range(min(2, len(evidence)))
    ]


def citations_of(evidence: Sequence[Evidence], markers: Sequence[int]) -> tuple[Citation, ...]:
    out = []
    for n in dict.fromkeys(markers):
        e = evidence[n - 1]
        sentences = tuple(r.index for r in e.rationales)
        out.append(Citation(n, e.passage.passage_id, e.passage.title, sentences, e.passage.section))
    return tuple(out)


def quoted(e: Evidence, limit: int | None = None, words: int = QUOTE_WORDS) -> str:
    """The rationale sentences of an evidence record, quoted in abstract order (the best
    ``limit`` of them, each cut to ``words`` words); a sentence whose words were already
    quoted (two overlapping snippets of one document) is quoted once."""
    picked = list(e.rationales)
    if limit is not None:
        best = sorted(picked, key=lambda r: -r.score)[:limit]
        picked = [r for r in picked if r in best]
    parts, seen = [], set()
    for r in picked:
        tokens = r.text.split()
        key = " ".join(tokens).casefold()
        if key in seen:
            continue
        seen.add(key)
        text = " ".join(tokens[:words]) + (" ..." if len(tokens) > words else "")
        parts.append(f'"{text}"')
    return " ".join(parts)


def decision_text(v: Verification, evidence: Sequence[Evidence], decision: str) -> str:
    """The decision and the verbatim sentences it rests on, each cited ``[n]``:
    ``Yes: [1] "..."`` or ``Maybe. The closest abstracts ...: [1] "..."``."""
    head = decision.capitalize()
    if v.label == NOT_ENOUGH_INFO:
        head += (
            ". The closest abstracts are related but none states whether it holds"
            if decision == "maybe"
            else ". No abstract decides it; the closest leans this way"
        )
    elif v.label == CONFLICTING:
        head += ". The abstracts disagree"
    cites = grounds(v, evidence, decision)
    if not cites:
        return head + "."
    quotes = [f"[{n}] {quoted(evidence[n - 1]) or evidence[n - 1].passage.title}" for n in cites]
    return head + ": " + " ".join(quotes)


def verification_trace(v: Verification) -> dict[str, Any]:
    return {
        "label": v.label,
        "confidence": v.confidence,
        "conflicting": v.conflicting,
        "supporting": list(v.supporting),
        "contradicting": list(v.contradicting),
    }


class VerdictGenerator:
    """The verifier's decision with its quoted rationale sentences; no LLM."""

    name = "verdict"

    def __init__(self, *, allow_maybe: bool = True, refuse_on_empty: bool = True) -> None:
        self.allow_maybe, self.refuse_on_empty = allow_maybe, refuse_on_empty

    @classmethod
    def from_settings(cls, settings: Settings, **kwargs: Any) -> VerdictGenerator:
        kwargs.pop("llm", None)
        kwargs.setdefault("allow_maybe", settings.answer.allow_maybe)
        kwargs.setdefault("refuse_on_empty", settings.answer.refuse_on_empty)
        return cls(**kwargs)

    def answer(
        self,
        question: str,
        evidence: Sequence[Evidence],
        question_type: str | None = None,
        *,
        sufficient: bool | None = None,
        verification: Verification | None = None,
    ) -> Answer:
        from sciera.generate.qtype import resolve_question_type
        from sciera.generate.refusal import refusal

        qtype = resolve_question_type(question, question_type)
        evidence = tuple(evidence)
        if qtype.kind != "yesno" or verification is None:
            why = "the verdict generator answers yes/no questions and claims with a verifier"
            return Answer(
                question,
                f"No answer: {why}.",
                qtype.kind,
                (),
                evidence,
                False,
                {
                    "degraded": why,
                    "exact": (),
                },
            )
        if not evidence and not verification.verdicts and self.refuse_on_empty:
            return refusal(question, "yesno", evidence, "retrieval and verification found nothing")
        decision = decide(verification, self.allow_maybe)
        text = decision_text(verification, evidence, decision)
        trace = {
            "exact": (decision,),
            "decided_by": "verifier",
            "verification": verification_trace(verification),
            "question_type_rule": qtype.rule,
        }
        cites = citations_of(evidence, grounds(verification, evidence, decision))
        return Answer(question, text, "yesno", cites, evidence, False, trace)
