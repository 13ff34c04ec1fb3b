"""The one pipeline: retrieve -> rerank -> filter -> evidence -> generate, for every path
that answers a question (``sciera ask``, ``sciera eval run``, the server and MCP, the
research agent's answer step, the benchmarks).

Data contract between stages (each stage returns its result and its trace):

- retrieve: question -> ``Ranking`` of ``spec.depth`` candidates (or the caller's
  ``candidates``: fixed pools, the research agent's gathered passages);
- rerank (optional): the first ``rerank_depth`` candidates -> a ``Ranking`` of them, best
  first, with the reranker's trace (DeepEra: intent, every passage's score and fate);
- filter: -> the kept passages (tau over calibrated scores, at most top_k; what a reranker
  excluded never), with every candidate's decision;
- verify (optional; claims and yes/no questions): the top-ranked abstracts of the reranked
  order (before tau) -> ``Verification`` (per abstract a verdict and its rationale
  sentences, the overall verdict); the answer's evidence then carries each abstract's
  rationale sentences, and an abstract below tau that decides the claim (or, when none
  does, the closest one) joins the evidence marked ``kept=False``; when nothing was kept
  and nothing verified, a factoid or list question's evidence is the ``filter.closest``
  best-ranked usable passages, marked ``kept=False`` (the generator keeps only answers
  they state verbatim);
- evidence (optional): kept passages -> ``EvidenceResult`` (concise evidence, sufficiency,
  CR); without an extractor the kept passages are the evidence as they are, and so for a
  verified question when ``verify.quote_only`` (the default: its rationale sentences are
  quoted instead of the extractor's LLM summaries; the ``evidence`` event then names the
  extractor ``quoted``);
- generate (optional): -> ``Answer`` whose ``[n]`` markers index ``Answer.evidence``.

``Pipeline.run(..., on_event=callback)`` reports each stage as it ends (how the HTTP server
streams progress): ``callback(name, payload)`` with JSON-ready payloads, in order

- ``retrieved``: ``first_stage``, ``depth``, ``seconds``, ``candidates`` (rank, score,
  passage_id, doc_id, title, text);
- ``reranked``: ``reranker``, ``seconds``, ``candidates`` (the candidate table: score, kept
  or filtered and why), ``filter`` (tau as applied, top_k), ``trace`` (the reranker's own);
- ``verified``: ``seconds`` and the verification (:func:`~sciera.verify.stage.verification_json`);
- ``evidence``: ``extractor``, ``seconds``, ``sufficient``, ``compression_ratio``,
  ``evidence`` (n, passage_id, title, score, summary), ``trace`` (the extractor's own);
- ``answer``: :func:`~sciera.pipeline.serialize.answer_json` of the answer.

An exception raised by the callback stops the run (a server cancels abandoned work so).
``PipelineResult.cost`` holds each stage's seconds and LLM calls and tokens.
"""

from __future__ import annotations

import time
from collections.abc import Callable, Iterator, Mapping
from contextlib import contextmanager
from dataclasses import dataclass, field, replace
from typing import TYPE_CHECKING, Any

from sciera.errors import ScieraError, require_query
from sciera.pipeline.serialize import answer_json, candidate_table, evidence_rows, ranking_rows
from sciera.pipeline.spec import CANDIDATES, PipelineSpec
from sciera.text import compression_ratio
from sciera.types import Answer, Evidence, Ranking, Verification, to_plain
from sciera.verify.stage import verification_json

QUOTED = "quoted"
"""The ``evidence`` event's extractor when a verified question's rationales are quoted."""

if TYPE_CHECKING:
    from sciera.evidence.base import EvidenceExtractor, EvidenceResult
    from sciera.filter import ThresholdFilter
    from sciera.generate.base import Generator
    from sciera.llm.metered import MeteredLLM
    from sciera.rerank.base import Reranker
    from sciera.retrieve.base import Retriever
    from sciera.verify.stage import SentenceSource, VerifyStage

OnEvent = Callable[[str, dict[str, Any]], None]


@dataclass(frozen=True)
class PipelineResult:
    """Everything one question's run produced, stage by stage."""

    question: str
    candidates: Ranking  # the first stage's (or the given) candidates
    reranked: Ranking | None  # the reranker's output (None without a reranker)
    kept: Ranking  # the filter's output: what the evidence and the answer read
    evidence: EvidenceResult | None  # None without an extractor
    answer: Answer | None  # None without a generator
    verification: Verification | None = None  # None when not verified
    traces: Mapping[str, Any] = field(default_factory=dict)  # per stage: its own trace
    cost: Mapping[str, dict[str, float]] = field(default_factory=dict)  # per stage

    @property
    def final(self) -> Ranking:
        """The ranking evaluation scores: the kept passages when the filter thresholded
        (DeepEra's step 3: what was judged relevant), else the whole reranked (or first-
        stage) order; a top_k cut alone only bounds what the answer reads."""
        if self.traces.get("filter", {}).get("tau") is not None:
            return self.kept
        return self.reranked if self.reranked is not None else self.candidates


@dataclass
class Pipeline:
    """Stages built from one :class:`PipelineSpec` (see :func:`~sciera.pipeline.build_pipeline`);
    ``llm`` is the metered LLM every stage shares (None when no stage uses one)."""

    spec: PipelineSpec
    retriever: Retriever | None
    reranker: Reranker | None
    filter: ThresholdFilter
    verifier: VerifyStage | None
    extractor: EvidenceExtractor | None
    generator: Generator | None
    llm: MeteredLLM | None = None
    rerank_depth: int = 30

    def run(
        self,
        question: str,
        question_type: str | None = None,
        *,
        candidates: Ranking | None = None,
        sentences: SentenceSource | None = None,
        on_event: OnEvent | None = None,
    ) -> PipelineResult:
        """Run ``question`` through every stage. ``candidates`` replaces retrieval (a
        pipeline whose first stage is ``candidates`` requires them); ``sentences`` gives the
        verify stage the abstracts' sentences (a candidate pool's own); ``question_type``
        overrides the generator's (auto-detected) answer type; ``on_event`` hears each
        stage end (see the module docstring)."""
        question = require_query(question, "question")
        spec = self.spec
        cost: dict[str, dict[str, float]] = {}
        traces: dict[str, Any] = {}

        def emit(name: str, payload: Callable[[], dict[str, Any]]) -> None:
            if on_event is not None:  # payloads are built only for a listener
                on_event(name, payload())

        with self._stage(cost, "retrieve"):
            if candidates is None:
                if self.retriever is None:
                    raise ScieraError(
                        f"retriever {CANDIDATES!r}: this pipeline needs the candidates given"
                    )
                candidates = self.retriever.search(question, spec.depth)
        emit(
            "retrieved",
            lambda: {
                "first_stage": spec.retriever,
                "depth": spec.depth,
                "seconds": cost["retrieve"]["seconds"],
                "candidates": ranking_rows(candidates),
            },
        )

        reranked: Ranking | None = None
        with self._stage(cost, "rerank"):
            if self.reranker is not None:
                reranked, traces["rerank"] = self.reranker.rerank_traced(
                    question, candidates.top(self.rerank_depth)
                )
        with self._stage(cost, "filter"):
            kept, traces["filter"] = self.filter.apply(
                reranked if reranked is not None else candidates
            )
        table = candidate_table(
            candidates, reranked if reranked is not None else candidates, traces["filter"]
        )
        emit(
            "reranked",
            lambda: {
                "reranker": spec.reranker or "none",
                "seconds": cost["rerank"]["seconds"] + cost["filter"]["seconds"],
                "candidates": table,
                "filter": {k: v for k, v in traces["filter"].items() if k != "decisions"},
                "trace": traces.get("rerank") or None,
            },
        )

        verification: Verification | None = None
        if self.verifier is not None and self._verifies(question, question_type):
            read = reranked if reranked is not None else candidates
            with self._stage(cost, "verify"):
                verification, traces["verify"] = self.verifier.verify(
                    question, read, sentences=sentences
                )
            emit(
                "verified",
                lambda: {
                    "seconds": cost["verify"]["seconds"],
                    **verification_json(verification),  # type: ignore[arg-type]
                },
            )

        ev: EvidenceResult | None = None
        evidence = tuple(Evidence(it.passage, it.score) for it in kept)
        sufficient: bool | None = None
        quoted = (  # a verified question: its rationales quoted instead of the extractor's
            self.extractor is not None
            and verification is not None
            and spec.verify is not None
            and spec.verify.quote_only
        )
        if self.extractor is not None and not quoted:
            with self._stage(cost, "evidence"):
                ev = self.extractor.extract(question, kept)
            evidence, sufficient = ev.evidence, ev.sufficient
            emit(
                "evidence",
                lambda: {
                    "extractor": self.extractor.name,  # type: ignore[union-attr]
                    "seconds": cost["evidence"]["seconds"],
                    "sufficient": ev.sufficient,
                    "compression_ratio": ev.compression_ratio,
                    "evidence": evidence_rows(ev.evidence),
                    "trace": to_plain(ev.trace),
                },
            )

        if verification is not None:
            evidence = with_rationales(
                evidence, verification, reranked if reranked is not None else candidates
            )
        elif not evidence and self._reads_closest(question, question_type):
            evidence = closest_evidence(
                reranked if reranked is not None else candidates, spec.filter.closest
            )
        if quoted:  # the event still comes, so every ask streams the same stages
            emit(
                "evidence",
                lambda: {
                    "extractor": QUOTED,
                    "seconds": 0.0,
                    "sufficient": None,
                    "compression_ratio": 1.0,
                    "evidence": evidence_rows(evidence),
                    "trace": {"quoted": "the rationale sentences of the verified abstracts"},
                },
            )

        answer: Answer | None = None
        if self.generator is not None:
            with self._stage(cost, "generate"):
                answer = self.generator.answer(
                    question,
                    evidence,
                    question_type,
                    sufficient=sufficient,
                    verification=verification,
                )
            info = {
                "first_stage": spec.retriever,
                "depth": spec.depth,
                "reranker": spec.reranker or "none",
                "evidence_extractor": (
                    QUOTED if quoted else self.extractor.name if self.extractor else "none"
                ),
                "filter": {k: v for k, v in traces["filter"].items() if k != "decisions"},
                "candidates": table,
                "sufficient": sufficient,
                "compression_ratio": ev.compression_ratio if ev is not None else 1.0,
                "compression_ratio_candidates": compression_ratio(
                    [it.passage.contents for it in candidates],
                    "\n".join(e.text for e in evidence),
                ),
                "evidence_trace": to_plain(ev.trace) if ev is not None else {},
                "rerank_trace": traces.get("rerank") or None,
                "verification": (
                    verification_json(verification) if verification is not None else None
                ),
                "verify_trace": traces.get("verify"),
                "seconds": {k: v["seconds"] for k, v in cost.items()},
                "cost": cost,
            }
            answer = replace(answer, trace={**answer.trace, "pipeline": info})
            emit("answer", lambda: answer_json(answer))
        return PipelineResult(
            question,
            candidates,
            reranked,
            kept,
            ev,
            answer,
            verification=verification,
            traces=traces,
            cost=cost,
        )

    def _kind(self, question: str, question_type: str | None) -> str:
        """The question's answer type as the generator reads it (given, else detected)."""
        from sciera.generate.qtype import resolve_question_type

        given = question_type or self.spec.generator_params.get("question_type")
        return resolve_question_type(question, given).kind

    def _verifies(self, question: str, question_type: str | None) -> bool:
        """Claims and yes/no questions are verified."""
        return self._kind(question, question_type) == "yesno"

    def _reads_closest(self, question: str, question_type: str | None) -> bool:
        """Whether the answer reads the closest passages below tau when nothing was kept: a
        factoid or list question (its answers can be checked verbatim against them)."""
        if self.generator is None or not self.spec.filter.closest:
            return False
        from sciera.generate.qtype import CHECKABLE_KINDS

        return self._kind(question, question_type) in CHECKABLE_KINDS

    def answer(self, question: str, question_type: str | None = None, **kw: Any) -> Answer:
        """:meth:`run` for a pipeline with a generator: its answer."""
        if self.generator is None:
            raise ScieraError("this pipeline has no generator: use run()")
        result = self.run(question, question_type, **kw)
        assert result.answer is not None
        return result.answer

    @contextmanager
    def _stage(self, cost: dict[str, dict[str, float]], name: str) -> Iterator[None]:
        """Time a stage and count the LLM calls and tokens it made (one row of ``cost``)."""
        from sciera.llm.accounting import stage

        before = self.llm.totals() if self.llm is not None else {}
        start = time.perf_counter()
        with stage(name):
            yield
        row: dict[str, float] = {"seconds": time.perf_counter() - start}
        if self.llm is not None:
            after = self.llm.totals()
            row.update({k: after[k] - before[k] for k in after})
        cost[name] = row


CLOSEST = 2
"""Abstracts below tau an undecided verdict adds to the evidence (the closest read)."""


def with_rationales(
    evidence: tuple[Evidence, ...], v: Verification, ranking: Ranking
) -> tuple[Evidence, ...]:
    """The evidence with each abstract's rationale sentences on its first record, and the
    verified abstracts the kept evidence lacks: those whose verdict decides (SUPPORT or
    CONTRADICT), or, when none does and nothing was kept, the closest ones; each added
    from its best-ranked passage, marked ``kept=False`` (below the filter's tau)."""
    from dataclasses import replace as _replace

    by_doc = {a.doc_id: a for a in v.verdicts}
    out: list[Evidence] = []
    seen: set[str] = set()
    for e in evidence:
        doc = e.passage.doc_id
        if doc in by_doc and doc not in seen:
            e = _replace(e, rationales=by_doc[doc].rationales)
        seen.add(doc)
        out.append(e)
    from sciera.types import NOT_ENOUGH_INFO

    deciding = [a for a in v.verdicts if a.label != NOT_ENOUGH_INFO and a.doc_id not in seen]
    if not deciding and not out:
        deciding = [a for a in v.verdicts if a.rationales][:CLOSEST]
    best = {}
    for it in ranking:
        best.setdefault(it.passage.doc_id, it)
    for a in deciding:
        it = best.get(a.doc_id)
        if it is not None:
            out.append(Evidence(it.passage, it.score, rationales=a.rationales, kept=False))
    return tuple(out)


def closest_evidence(ranking: Ranking, n: int) -> tuple[Evidence, ...]:
    """The ``n`` best-ranked usable passages (never one a reranker excluded) as evidence
    marked ``kept=False``: what a checkable answer reads when the filter kept nothing."""
    from sciera.filter import ThresholdFilter

    closest, _ = ThresholdFilter(None, n).apply(ranking)
    return tuple(Evidence(it.passage, it.score, kept=False) for it in closest)
