"""The research agent: a ReAct loop through the LLM protocol.

Each turn the LLM returns one JSON action (:mod:`sciera.research.actions`): ``search``
(query -> Q2Q rewrite -> first stage [+ reranker] -> top 5 passages shown as delimited
data), ``get_document`` (a whole document), or ``answer``. The conversation grows by
appending each reply and its observation, so every call's prompt is a prefix of the next
(llama.cpp reuses the KV cache of a shared prefix).

A run ends when the agent answers, or at the first limit reached, named in
``Run.stopped_by``: ``max_steps``, ``budget_tokens`` (prompt + completion tokens of the
agent's and Q2Q's calls), ``wall_time``, ``malformed_action`` (a reply that is not a valid
action, shown its error once and still invalid), ``no_progress`` (the same search or
document asked for again twice in a row: the first repeat is refused with the queries
tried so far), ``context_full`` (the conversation plus the next reply would not fit the
LLM's context window). An ``answer`` before any search is refused with a note: the
agent must look first.

Whatever ends the run, the final answer comes from the same pipeline ``sciera ask``
runs (``answerer``: its filter and generator, the gathered passages as its candidates:
each once, best score first, injection-flagged ones left out; the filter keeps at most
``top_k``), so typing, citations and refusal behave as in ``ask``; a run a limit ended is
marked partial.

Per-step evidence extraction (EviOmni): an optional ``extractor``
(:class:`~sciera.evidence.base.EvidenceExtractor`) condenses each search's results before
they enter the context, and its "sufficient" verdict ends the run with an answer.
"""

from __future__ import annotations

import time
from collections.abc import Sequence
from dataclasses import dataclass, field, replace
from typing import TYPE_CHECKING, Any

from sciera.errors import ScieraError, require_query
from sciera.llm.base import Message, ParseFailure, context_limits
from sciera.research.actions import ACTION_SCHEMA, Action, read_action
from sciera.research.limits import Limits
from sciera.research.pool import EvidencePool
from sciera.research.q2q import QueryRewriter, route_queries
from sciera.research.tools import (
    DocumentReader,
    SearchTool,
    TokenCutter,
    injection_flags,
    render_document,
    render_passages,
)
from sciera.research.trace import Run, Step

if TYPE_CHECKING:
    from sciera.evidence.base import EvidenceExtractor
    from sciera.llm.base import LLM
    from sciera.pipeline import Pipeline
    from sciera.types import Ranking

PROMPT = "research_agent"
REPAIR = (
    "Your reply was not a valid action ({error}). Reply with exactly one JSON object with a "
    'short thought: {{"action": "search", "query": "...", "doc_id": "", "thought": "..."}}, '
    '{{"action": "get_document", "query": "", "doc_id": "...", "thought": "..."}} or '
    '{{"action": "answer", "query": "", "doc_id": "", "thought": "..."}}.'
)
SEARCH_FIRST = "You have not searched yet. Search for evidence before answering."
REPEATED = (
    "You already made that request; its results are above. Queries so far: {tried}. Search "
    "with different terms for a part of the question the passages do not cover yet, or "
    "answer."
)
TEMPLATE_TOKENS = 8
"""Chat-template tokens around each message (role markers), added to the content's count."""
MAX_REPEATS = 1
"""Repeated requests in a row that are refused with a note; one more ends the run."""
NEXT = "Check every part of the question against these results, then reply with the next action."


@dataclass
class _Turn:
    """One LLM turn: the action (or None) and what it cost."""

    action: Action | None
    error: str = ""
    repaired: bool = False
    prompt_tokens: int = 0
    completion_tokens: int = 0


@dataclass
class _Loop:
    """A run's state between steps: the pooled evidence, the steps, the requests made, the
    tokens spent, searches, repeated requests in a row and why it stopped ("" running)."""

    pool: EvidencePool = field(default_factory=EvidencePool)
    steps: list[Step] = field(default_factory=list)
    seen: set[tuple[str, str]] = field(default_factory=set)
    prompt_tokens: int = 0
    completion_tokens: int = 0
    searches: int = 0
    repeats: int = 0
    stopped: str = ""


@dataclass
class ResearchAgent:
    llm: LLM
    search_tool: SearchTool
    reader: DocumentReader | None
    answerer: Pipeline
    rewriter: QueryRewriter
    limits: Limits = field(default_factory=Limits)
    first_stage: str = "bm25"
    lexical_raw: bool = True
    passage_tokens: int = 512
    document_tokens: int = 2048
    extractor: EvidenceExtractor | None = None
    cutter: TokenCutter | None = None
    max_action_tokens: int = 384

    def run(self, question: str, question_type: str | None = None) -> Run:
        from sciera.llm.prompting import load_prompt

        question = require_query(question, "question")
        cutter = self.cutter or TokenCutter.for_llm(self.llm)
        messages = list(
            load_prompt(PROMPT).render(question=question, max_steps=self.limits.max_steps)
        )
        loop, t_run = _Loop(), time.perf_counter()
        while not loop.stopped:
            self._turn(loop, messages, question, cutter, t_run)
        return self._finish(loop, question, question_type, t_run)

    def _turn(
        self,
        loop: _Loop,
        messages: list[Message],
        question: str,
        cutter: TokenCutter,
        t_run: float,
    ) -> None:
        """One step: stop at a limit or a full context; else ask for the next action, run
        it, record the step and append its observation to the messages."""
        spent = loop.prompt_tokens + loop.completion_tokens
        limit = self.limits.exceeded(len(loop.steps), spent, time.perf_counter() - t_run)
        if limit:
            loop.stopped = limit
            return
        if not self._fits(messages):
            loop.stopped = "context_full"
            return
        t0, n = time.perf_counter(), len(loop.steps) + 1
        try:
            turn = self._next_action(messages)
        except ScieraError as exc:  # the token count above was an estimate
            if "context window" not in str(exc):
                raise
            loop.stopped = "context_full"
            return
        loop.prompt_tokens += turn.prompt_tokens
        loop.completion_tokens += turn.completion_tokens
        cost = {
            "prompt_tokens": turn.prompt_tokens,
            "completion_tokens": turn.completion_tokens,
        }
        a = turn.action
        if a is None:
            loop.steps.append(
                Step(n, "malformed", error=turn.error, seconds=time.perf_counter() - t0, **cost)
            )
            loop.stopped = "malformed_action"
            return
        base = Step(n, a.kind, a.thought, error=turn.error, repaired=turn.repaired, **cost)
        step, observation = self._act(loop, base, a, question, cutter)
        loop.steps.append(replace(step, seconds=time.perf_counter() - t0))
        if observation:
            messages.append(Message("user", observation))

    def _act(
        self, loop: _Loop, base: Step, a: Action, question: str, cutter: TokenCutter
    ) -> tuple[Step, str]:
        """Run one action: its step and the observation the LLM reads next ("" for none);
        an answer before any search is refused, a repeated request refused once."""
        observation = ""
        if a.kind == "answer" and loop.searches == 0:
            step, observation = replace(base, note=SEARCH_FIRST), SEARCH_FIRST
        elif a.kind == "answer":
            step, loop.stopped = base, "answer"
        elif a.key() in loop.seen:
            step = replace(base, query=a.query, doc_id=a.doc_id)
            loop.repeats += 1
            if loop.repeats > MAX_REPEATS:
                step, loop.stopped = replace(step, note="repeated request"), "no_progress"
            else:  # small models repeat themselves: refuse once, say what was tried
                step = replace(step, note="repeated request refused")
                tried = "; ".join(f'"{k[1]}"' for k in loop.seen if k[0] == "search")
                observation = REPEATED.format(tried=tried)
        elif a.kind == "search":
            loop.repeats = 0
            loop.seen.add(a.key())
            loop.searches += 1
            step, observation, sufficient = self._search(base, a, question, loop.pool, cutter)
            loop.prompt_tokens += step.prompt_tokens - base.prompt_tokens
            loop.completion_tokens += step.completion_tokens - base.completion_tokens
            if sufficient:
                step, loop.stopped = replace(step, note="evidence judged sufficient"), "answer"
        else:
            loop.repeats = 0
            loop.seen.add(a.key())
            step, observation = self._get_document(base, a, loop.pool, cutter)
        return step, observation

    def _finish(self, loop: _Loop, question: str, question_type: str | None, t_run: float) -> Run:
        """Answer from the pooled evidence (partial unless the agent answered) and the run."""
        answer = self.answerer.answer(
            question, question_type, candidates=loop.pool.ranking(question)
        )
        seconds = time.perf_counter() - t_run
        info = {
            "stopped_by": loop.stopped,
            "partial": loop.stopped != "answer",
            "steps": len(loop.steps),
            "search_calls": loop.searches,
        }
        answer = replace(answer, trace={**answer.trace, "research": info})
        return Run(
            question,
            answer,
            loop.stopped,
            tuple(loop.steps),
            loop.searches,
            loop.prompt_tokens,
            loop.completion_tokens,
            seconds,
            self.describe(),
        )

    def describe(self) -> dict[str, Any]:
        return {
            "search": self.search_tool.description,
            "q2q": self.rewriter.mode,
            "lexical_raw": self.lexical_raw,
            "max_steps": self.limits.max_steps,
            "budget_tokens": self.limits.budget_tokens,
            "max_seconds": self.limits.max_seconds,
            "top_k": self.answerer.filter.top_k,
            "passage_tokens": self.passage_tokens,
            "token_counter": "llm" if (self.cutter or TokenCutter()).count else "words*0.75",
            "extractor": getattr(self.extractor, "name", None),
        }

    def _fits(self, messages: Sequence[Message]) -> bool:
        """Whether the conversation and a full next reply (and its repair) fit the context
        window, by the backend's token counter (always True without one)."""
        limits = context_limits(self.llm)
        if limits is None:
            return True
        n_ctx, count = limits
        used = sum(count(m.content) + TEMPLATE_TOKENS for m in messages)
        return used + 2 * self.max_action_tokens <= n_ctx

    # -- one turn ---------------------------------------------------------------------
    def _next_action(self, messages: list[Message]) -> _Turn:
        """Ask for an action; a malformed reply is shown its error and retried once.

        Both replies (and the repair request) stay in ``messages``: the conversation is
        what the model saw."""
        from sciera.llm.accounting import stage

        turn = _Turn(None)
        for attempt in range(2):
            with stage("research.action"):
                result = self.llm.complete_json(
                    messages, ACTION_SCHEMA, max_tokens=self.max_action_tokens
                )
            c = result.completion
            turn.prompt_tokens += c.prompt_tokens
            turn.completion_tokens += c.completion_tokens
            parsed = read_action(result)
            messages.append(Message("assistant", c.text))  # as generated: a KV-cached prefix
            if not isinstance(parsed, ParseFailure):
                turn.action, turn.repaired = parsed, attempt > 0
                return turn
            turn.error = parsed.error
            if attempt == 0:
                messages.append(Message("user", REPAIR.format(error=parsed.error)))
        return turn

    def _search(
        self, base: Step, a: Action, question: str, pool: EvidencePool, cutter: TokenCutter
    ) -> tuple[Step, str, bool]:
        rw = self.rewriter.rewrite(a.query, a.thought)
        routed = route_queries(rw, self.first_stage, lexical_raw=self.lexical_raw)
        ranking = self.search_tool.search(routed)
        flags = injection_flags([it.passage for it in ranking])
        pool.add(ranking)
        pool.exclude(flags)
        step = replace(
            base,
            query=a.query,
            question=rw.question,
            q2q_used=rw.accepted,
            q2q_reason=rw.reason,
            first_stage_query=routed.first_stage,
            rerank_query=routed.rerank if self.search_tool.reranker is not None else "",
            routing_note=routed.note,
            result_ids=tuple(ranking.passage_ids),
            scores=tuple(it.score for it in ranking),
            flagged=flags,
            prompt_tokens=base.prompt_tokens + rw.prompt_tokens,
            completion_tokens=base.completion_tokens + rw.completion_tokens,
        )
        sufficient = False
        if not len(ranking):
            return replace(step, note="no results"), f"No results for {a.query!r}. {NEXT}", False
        if self.extractor is not None:
            body, sufficient = self._extract(question, ranking, flags, cutter)
        else:
            passages = [it.passage for it in ranking]
            body = render_passages(passages, cutter, self.passage_tokens, flags)
        head = f"Results for {a.query!r}"
        if rw.accepted:
            head += f" (searched as {rw.question!r})"
        return step, f"{head}:\n{body}\n\n{NEXT}", sufficient

    def _extract(
        self, question: str, ranking: Ranking, flags: dict[str, list[str]], cutter: TokenCutter
    ) -> tuple[str, bool]:
        """The extractor's evidence as the observation (flagged passages never reach it)."""
        from sciera.llm.prompting import delimit
        from sciera.types import Ranking as _Ranking

        clean = _Ranking(ranking.query, [it for it in ranking if it.passage_id not in flags])
        ev = self.extractor.extract(question, clean)  # type: ignore[union-attr]
        blocks = [
            delimit(cutter.cut(e.text, self.passage_tokens)[0], "passage", id=e.passage.passage_id)
            for e in ev.evidence
        ]
        return "\n\n".join(blocks) or "(no evidence in these results)", bool(ev.sufficient)

    def _get_document(
        self, base: Step, a: Action, pool: EvidencePool, cutter: TokenCutter
    ) -> tuple[Step, str]:
        passages = self.reader.passages(a.doc_id) if self.reader is not None else []
        step = replace(base, doc_id=a.doc_id)
        if not passages:
            note = f"no document with id {a.doc_id!r}"
            return replace(step, note=note), f"There is {note}. {NEXT}"
        flags = injection_flags(passages)
        score = pool.score_of_doc(a.doc_id) or 0.0
        from sciera.types import ScoredPassage

        pool.add(ScoredPassage(p, score, rank=i + 1) for i, p in enumerate(passages))
        pool.exclude(flags)
        step = replace(
            step,
            result_ids=tuple(p.passage_id for p in passages),
            scores=tuple(score for _ in passages),
            flagged=flags,
        )
        body = render_document(passages, cutter, self.document_tokens, bool(flags))
        return step, f"Document {a.doc_id}:\n{body}\n\n{NEXT}"


def pool_passages(run: Run) -> Sequence[str]:
    """Every passage id a run's searches and reads returned, in order, each once."""
    return list(dict.fromkeys(pid for s in run.steps for pid in s.result_ids))
