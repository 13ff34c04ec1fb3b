"""``llm``: answers by question type with an LLM, cited and checked.

- yesno: ``choice_logprobs`` over yes/no(/maybe) gives the decision (the probabilities go
  to the trace), optionally divided by the model's content-free prior
  (``yesno_prior="content_free"``, :mod:`sciera.generate.prior`); optionally one JSON call
  adds a cited explanation.
- factoid: JSON ``{"answers": [...], "explanation": str}``; at most 5 ranked entities.
- list: the same schema, every entity.
- ideal: JSON ``{"answer": str}``; a paragraph cut to ``max_words`` words.

A reply that cannot be read gives a degraded Answer (``trace["degraded"]`` says why,
``exact`` is empty), never an exception and never a guessed answer.
"""

from __future__ import annotations

import time
from collections.abc import Sequence
from typing import TYPE_CHECKING, Any

from sciera.corpus.sentences import split_sentences
from sciera.generate.citations import cite_all, cite_stating, resolve_citations, stating
from sciera.generate.prior import CONTENT_FREE, apply_prior, average_prior
from sciera.generate.prompts import PROMPTS, render_evidence, style
from sciera.generate.qtype import CHECKABLE_KINDS, resolve_question_type
from sciera.generate.refusal import refusal, refusal_reason
from sciera.llm.parsing import strip_reasoning
from sciera.rerank.base import truncate_words
from sciera.types import CONFLICTING, CONTRADICT, NOT_ENOUGH_INFO, SUPPORT, Answer, Evidence

if TYPE_CHECKING:
    from sciera.types import Verification

if TYPE_CHECKING:
    from sciera.llm.base import LLM
    from sciera.settings import Settings

EXPLAIN_TOKENS = 56
"""Completion tokens of a verified yes/no explanation (two short sentences fit)."""
EXPLAIN_WORDS = 45
EXPLAIN_ABSTRACTS = 2  # abstracts quoted to the LLM (the ones the decision rests on)
EXPLAIN_SENTENCES = 2  # their best rationale sentences
EXPLAIN_QUOTE_WORDS = 40  # words of each quoted sentence
GUIDANCE = {
    SUPPORT: "Say what the quoted sentences report that supports it.",
    CONTRADICT: "Say what the quoted sentences report that contradicts it.",
    CONFLICTING: "Say which abstracts point each way.",
    NOT_ENOUGH_INFO: "Say what the abstracts do show and what they do not show about it.",
}
MAX_FACTOIDS = 5
MAX_LIST = 20
ENTITY_LIMITS = {"factoid": MAX_FACTOIDS, "list": MAX_LIST}
_ENTITIES = {
    "type": "object",
    "properties": {
        "answers": {"type": "array", "items": {"type": "string"}, "minItems": 1},
        "explanation": {"type": "string"},
    },
    "required": ["answers", "explanation"],
}
_IDEAL = {
    "type": "object",
    "properties": {"answer": {"type": "string", "minLength": 1}},
    "required": ["answer"],
}
_EXPLAIN = {
    "type": "object",
    "properties": {"explanation": {"type": "string", "minLength": 1}},
    "required": ["explanation"],
}


def limit_sentences(text: str, max_sentences: int, max_words: int) -> tuple[str, bool]:
    """At most ``max_sentences`` whole sentences within ``max_words`` (whether it cut)."""
    text = " ".join(text.split())
    if not text:
        return "", False
    sentences = split_sentences(text)
    kept = sentences[:max_sentences]
    cut = len(kept) < len(sentences)
    if kept and not kept[-1].rstrip().endswith((".", "!", "?", "]", ")")):
        cut = True  # the token limit stopped it mid-sentence: drop the fragment
        kept = kept[:-1] or kept
    limited, over = limit_words(" ".join(kept), max_words)
    return limited, cut or over


def limit_words(text: str, max_words: int) -> tuple[str, bool]:
    """At most ``max_words`` words: whole sentences while they fit, else a hard cut."""
    if len(text.split()) <= max_words:
        return text.strip(), False
    kept: list[str] = []
    for sentence in split_sentences(text):
        if len(" ".join([*kept, sentence]).split()) > max_words:
            break
        kept.append(sentence)
    if kept:
        return " ".join(kept), True
    return " ".join(text.split()[:max_words]), True


def _entities(values: Sequence[Any]) -> list[str]:
    """The distinct names (case aside), spaces collapsed, in the reply's order."""
    out: list[str] = []
    for v in values:
        name = " ".join(str(v).split()).strip(" .;")
        if name and name.casefold() not in {o.casefold() for o in out}:
            out.append(name)
    return out


class LLMGenerator:
    name = "llm"

    def __init__(
        self,
        llm: LLM,
        *,
        allow_maybe: bool = False,
        extractive: bool = False,
        refuse_on_empty: bool = True,
        refuse_on_insufficient: bool = True,
        explain_yesno: bool | None = None,
        max_words: int = 200,
        passage_words: int = 200,
        yesno_prior: str = "none",
        question_type: str | None = None,
        decision_only: bool = False,
    ) -> None:
        self.decision_only = decision_only
        if yesno_prior not in ("none", "content_free"):
            raise ValueError(f"yesno_prior must be 'none' or 'content_free', not {yesno_prior!r}")
        self.yesno_prior = yesno_prior
        self.question_type = (
            question_type  # every answer of this type (e.g. ideal), else per question
        )
        self._prior: dict[str, float] | None = None  # computed on first use
        self.llm = llm
        self.allow_maybe, self.extractive = allow_maybe, extractive
        self.refuse_on_empty, self.refuse_on_insufficient = refuse_on_empty, refuse_on_insufficient
        self.explain_yesno, self.max_words, self.passage_words = (
            explain_yesno,
            max_words,
            passage_words,
        )

    @classmethod
    def from_settings(cls, settings: Settings, **kwargs: Any) -> LLMGenerator:
        llm = kwargs.pop("llm", None)
        if llm is None:
            from sciera.llm.registry import make_llm

            llm = make_llm(settings)
        a = settings.answer
        opts = {
            "allow_maybe": a.allow_maybe,
            "extractive": a.extractive,
            "refuse_on_empty": a.refuse_on_empty,
            "refuse_on_insufficient": a.refuse_on_insufficient,
            "explain_yesno": a.explain_yesno,
            "max_words": a.max_words,
            "passage_words": a.passage_words,
            "yesno_prior": a.yesno_prior,
            "decision_only": a.decision_only,
        }
        return cls(llm, **{**opts, **kwargs})

    # -- protocol ---------------------------------------------------------------------
    def answer(
        self,
        question: str,
        evidence: Sequence[Evidence],
        question_type: str | None = None,
        *,
        sufficient: bool | None = None,
        verification: Verification | None = None,
    ) -> Answer:
        qtype = resolve_question_type(question, question_type or self.question_type)
        evidence = tuple(evidence)
        if qtype.kind == "yesno" and verification is not None:
            return self._verified(question, evidence, verification, qtype.rule)
        # nothing kept: the closest passages below tau, read only for a checkable answer
        below = bool(evidence) and not any(e.kept for e in evidence)
        if below and qtype.kind not in CHECKABLE_KINDS:
            evidence = ()
        closest = below and bool(evidence)
        why = (
            ""
            if closest
            else refusal_reason(
                evidence,
                None if below else sufficient,  # below tau, the extractor judged nothing
                on_empty=self.refuse_on_empty,
                on_insufficient=self.refuse_on_insufficient,
            )
        )
        if why:
            refused = refusal(question, qtype.kind, evidence, why)
            return _with_trace(refused, {"question_type_rule": qtype.rule})
        from sciera.llm.accounting import stage

        t0 = time.perf_counter()
        with stage(f"generate.{qtype.kind}"):
            if closest:
                text, exact, trace = self._entity_answer(
                    qtype.kind, question, evidence, verbatim=True
                )
                trace["closest"] = len(evidence)
            else:
                text, exact, trace = getattr(self, f"_{qtype.kind}")(question, evidence)
        if closest and not exact and "degraded" not in trace:
            why = (
                f"no passage passed the filter, and the {len(evidence)} closest state none "
                "of the answers verbatim"
            )
            refused = refusal(question, qtype.kind, evidence, why)
            return _with_trace(refused, {**trace, "question_type_rule": qtype.rule})
        trace["question_type_rule"] = qtype.rule
        trace["extractive"] = self.extractive
        trace["seconds"] = time.perf_counter() - t0
        if "degraded" in trace:
            return Answer(question, text, qtype.kind, (), evidence, False, {**trace, "exact": ()})
        cited = resolve_citations(text, evidence)
        citations = cited.citations
        if not citations and trace.pop("cite_all", False):
            citations = cite_all(evidence)
        trace.pop("cite_all", None)
        if exact and qtype.kind in CHECKABLE_KINDS and (closest or not citations):
            citations = cite_stating(citations, exact, evidence)  # where it says so
        if not citations and len(evidence) == 1 and not closest:
            citations = cite_all(evidence)  # the one passage it read
        trace.update(
            exact=tuple(exact),
            dangling_citations=len(cited.dangling),
            dangling_markers=list(cited.dangling),
            uncited_sentences=cited.uncited_sentences,
        )
        return Answer(question, cited.text, qtype.kind, citations, evidence, False, trace)

    def _verified(
        self, question: str, evidence: tuple[Evidence, ...], v: Verification, rule: str
    ) -> Answer:
        """A yes/no answer whose decision is the verifier's (:mod:`sciera.generate.verified`):
        a refusal only when retrieval and verification found nothing; by default the
        answer is the decision and the verbatim sentences it rests on. With
        ``explain_yesno=True`` (and not ``decision_only``) the LLM writes at most two
        sentences given the decision and the quoted rationale sentences (plain text, so no
        reply is unparseable); an empty reply, or one that opens with the opposite
        decision, falls back to the quotes."""
        from sciera.generate import verified

        if not evidence and not v.verdicts and self.refuse_on_empty:
            why = "retrieval and verification found nothing"
            return _with_trace(
                refusal(question, "yesno", evidence, why), {"question_type_rule": rule}
            )
        decision = verified.decide(v, self.allow_maybe)
        trace: dict[str, Any] = {
            "exact": (decision,),
            "decided_by": "verifier",
            "verification": verified.verification_trace(v),
            "question_type_rule": rule,
        }
        grounds = verified.grounds(v, evidence, decision)
        explanation = ""
        if self.explain_yesno and not self.decision_only:  # unset: the quotes alone
            explanation = self._explain(question, evidence, v, decision, grounds, trace)
        if not explanation:  # the decision and the verbatim sentences it rests on
            text = verified.decision_text(v, evidence, decision)
            citations = verified.citations_of(evidence, grounds)
            return Answer(question, text, "yesno", citations, evidence, False, trace)
        cited = resolve_citations(f"{decision.capitalize()}. {explanation}".strip(), evidence)
        markers = [c.marker for c in cited.citations] + grounds
        trace.update(
            dangling_citations=len(cited.dangling),
            dangling_markers=list(cited.dangling),
            uncited_sentences=cited.uncited_sentences,
        )
        citations = verified.citations_of(evidence, markers)
        return Answer(question, cited.text, "yesno", citations, evidence, False, trace)

    def _explain(
        self,
        question: str,
        evidence: tuple[Evidence, ...],
        v: Verification,
        decision: str,
        grounds: list[int],
        trace: dict[str, Any],
    ) -> str:
        """At most two sentences the LLM writes given the decision, from the best sentences
        of the abstracts it rests on ("" when the reply says the opposite of the decision:
        the answer then quotes the sentences alone, and the trace keeps the reply)."""
        from sciera.generate import verified
        from sciera.llm.accounting import stage
        from sciera.llm.prompting import delimit, load_prompt

        t0 = time.perf_counter()
        # only the abstracts the decision rests on, their best sentences: a short prompt
        blocks = []
        for n in grounds[:EXPLAIN_ABSTRACTS]:
            e = evidence[n - 1]
            quotes = verified.quoted(e, EXPLAIN_SENTENCES, EXPLAIN_QUOTE_WORDS)
            text = (f"{e.passage.title}\n" if e.passage.title else "") + (
                quotes or truncate_words(e.text, EXPLAIN_QUOTE_WORDS)
            )
            blocks.append(delimit(text, "passage", id=str(n)))
        template = load_prompt("answer_verified")
        messages = template.render(
            question=question,
            evidence="\n".join(blocks),
            decision=decision,
            guidance=GUIDANCE[v.label],
        )
        with stage("generate.yesno"):
            reply = self.llm.complete(messages, max_tokens=EXPLAIN_TOKENS, stop=["\n"])
        explanation, cut = limit_sentences(strip_reasoning(reply.text), 2, EXPLAIN_WORDS)
        trace.update(
            prompts=[f"{template.name}@{template.version}"],
            prompt_tokens=reply.prompt_tokens,
            completion_tokens=reply.completion_tokens,
            explanation_cut=cut,
            seconds=time.perf_counter() - t0,
        )
        if verified.opposes(explanation, decision):
            trace["explanation_dropped"] = explanation
            return ""
        return explanation

    # -- one method per question type -------------------------------------------------
    def _messages(self, kind: str, question: str, evidence: Sequence[Evidence], **extra: Any):
        return self._render(kind, question, render_evidence(evidence, self.passage_words), **extra)

    def _render(self, kind: str, question: str, evidence_text: str, **extra: Any):
        from sciera.llm.prompting import load_prompt

        template = load_prompt(PROMPTS[kind])
        values = {
            "question": question,
            "evidence": evidence_text,
            "style": style(self.extractive),
            **extra,
        }
        return template.render(**values), f"{template.name}@{template.version}"

    def yesno_options(self) -> list[str]:
        return ["yes", "no", "maybe"] if self.allow_maybe else ["yes", "no"]

    def content_free_prior(self) -> dict[str, float]:
        """The model's yes/no(/maybe) prior on content-free inputs, computed once."""
        from sciera.llm.prompting import delimit_passages

        if self._prior is None:
            options = self.yesno_options()
            rows = []
            for filler in CONTENT_FREE:
                evidence = delimit_passages([filler])
                messages, _ = self._render("yesno", filler, evidence, options=_shown(options))
                rows.append(self.llm.choice_logprobs(messages, options).probs)
            self._prior = average_prior(rows, options)
        return self._prior

    def _json(self, kind: str, question: str, evidence, schema, max_tokens: int, **extra: Any):
        messages, prompt = self._messages(kind, question, evidence, **extra)
        res = self.llm.complete_json(messages, schema, max_tokens=max_tokens)
        trace: dict[str, Any] = {
            "prompts": [prompt],
            "prompt_tokens": res.completion.prompt_tokens,
            "completion_tokens": res.completion.completion_tokens,
        }
        if not res.ok or res.value is None:
            error = res.failure.error if res.failure else "no value"
            trace["degraded"] = f"unreadable {kind} reply ({error})"
            trace["raw"] = res.completion.text
            trace["finish_reason"] = res.completion.finish_reason
        return res.value, trace

    def _degraded_text(self, trace: dict[str, Any]) -> str:
        return f"No answer: {trace['degraded']}."

    def _yesno(self, question: str, evidence: Sequence[Evidence]):
        options = self.yesno_options()
        messages, prompt = self._messages("yesno", question, evidence, options=_shown(options))
        probs = self.llm.choice_logprobs(messages, options)
        trace: dict[str, Any] = {
            "prompts": [prompt],
            "probs": dict(probs.probs),
            "choice_mass": probs.raw_mass,
            "prompt_tokens": probs.prompt_tokens,
        }
        if not probs.probs or max(probs.probs.values()) <= 0.0:
            trace["degraded"] = "no yes/no decision could be read from the model"
            return self._degraded_text(trace), (), trace
        decide = dict(probs.probs)
        if self.yesno_prior == "content_free":
            trace["prior"] = self.content_free_prior()
            trace["probs_raw"] = decide
            decide = trace["probs"] = apply_prior(decide, trace["prior"])
        decision = max(options, key=lambda o: (decide.get(o, 0.0), -options.index(o)))
        head = decision.capitalize() + "."
        if self.decision_only or self.explain_yesno is False:
            return head, (decision,), {**trace, "cite_all": True}
        value, jtrace = self._json("explain", question, evidence, _EXPLAIN, 100, decision=decision)
        trace["prompts"] += jtrace["prompts"]
        trace["completion_tokens"] = jtrace["completion_tokens"]
        if value is None:  # a cut explanation keeps its whole sentences
            value = _salvage_cut_answer(jtrace, "explanation")
            if value is not None:
                trace["explanation_salvaged"] = jtrace["salvaged"]
        if value is None:  # the decision stands; the explanation is missing
            trace["explanation_error"] = jtrace["degraded"]
            return head, (decision,), {**trace, "cite_all": True}
        explanation = " ".join(str(value["explanation"]).split())
        # the decision read all the evidence: without markers, it cites all of it
        return f"{head} {explanation}", (decision,), {**trace, "cite_all": True}

    def _entity_answer(
        self, kind: str, question: str, evidence: Sequence[Evidence], *, verbatim: bool = False
    ):
        """At most :data:`ENTITY_LIMITS` names. ``verbatim``: keep only the names a passage
        of ``evidence`` states word for word (the others go to the trace's ``unstated``);
        none left gives no exact answer and no text, not a degraded one."""
        value, trace = self._json(kind, question, evidence, _ENTITIES, 256)
        if value is None:
            return self._degraded_text(trace), (), trace
        names = _entities(value["answers"])
        if verbatim:
            trace["unstated"] = [n for n in names if not stating(n, evidence)]
            names = [n for n in names if n not in trace["unstated"]]
            if not names:
                return "", (), trace
        limit = ENTITY_LIMITS[kind]
        names, dropped = names[:limit], max(0, len(names) - limit)
        if not names:
            trace["degraded"] = f"the {kind} reply named no entity"
            return self._degraded_text(trace), (), trace
        trace["entities_dropped"] = dropped
        explanation = " ".join(str(value["explanation"]).split())
        text = "; ".join(names) + "." + (f" {explanation}" if explanation else "")
        return text, tuple(names), trace

    def _factoid(self, question: str, evidence: Sequence[Evidence]):
        return self._entity_answer("factoid", question, evidence)

    def _list(self, question: str, evidence: Sequence[Evidence]):
        return self._entity_answer("list", question, evidence)

    def _ideal(self, question: str, evidence: Sequence[Evidence]):
        value, trace = self._json(
            "ideal", question, evidence, _IDEAL, 2 * self.max_words + 64, max_words=self.max_words
        )
        if value is None:
            value = _salvage_cut_answer(trace)
            if value is None:
                return self._degraded_text(trace), (), trace
        text, cut = limit_words(" ".join(str(value["answer"]).split()), self.max_words)
        trace["truncated"] = cut or bool(trace.get("salvaged"))
        return text, (), trace


def _salvage_cut_answer(trace: dict[str, Any], field: str = "answer") -> dict[str, str] | None:
    """A reply cut by the token limit inside its string ``field`` (an ideal answer, a yes/no
    explanation) keeps that field's whole sentences instead of degrading."""
    from sciera.llm.parsing import salvage_cut_field

    kept = salvage_cut_field(trace.get("raw", ""), field, trace.get("finish_reason", ""))
    if kept is None:
        return None
    trace["salvaged"] = trace.pop("degraded") + "; kept its whole sentences before the cut"
    trace.pop("raw", None)
    return {field: kept}


def _shown(options: Sequence[str]) -> str:
    """``yes or no`` / ``yes, no or maybe`` as the prompt lists them."""
    return ", ".join(options[:-1]) + f" or {options[-1]}"


def _with_trace(answer: Answer, extra: dict[str, Any]) -> Answer:
    from dataclasses import replace

    return replace(answer, trace={**answer.trace, **extra})
