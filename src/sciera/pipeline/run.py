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
class _Run:
    """One question's run in progress: what its stages share."""

    question: str
    question_type: str | None
    on_event: OnEvent | None
    cost: dict[str, dict[str, float]] = field(default_factory=dict)  # per stage
    traces: dict[str, Any] = field(default_factory=dict)  # per stage: its own trace

    def emit(self, name: str, payload: Callable[[], dict[str, Any]]) -> None:
        """Tell the listener a stage ended; payloads are built only for a listener."""
        if self.on_event is not None:
            self.on_event(name, payload())


def _filter_summary(trace: Mapping[str, Any]) -> dict[str, Any]:
    """The filter's trace without its per-candidate decisions (tau as applied, top_k)."""
    return {k: v for k, v in trace.items() if k != "decisions"}


def _quoted_event(evidence: tuple[Evidence, ...]) -> dict[str, Any]:
    """The ``evidence`` event of a verified question whose rationales are quoted."""
    return {
        "extractor": QUOTED,
        "seconds": 0.0,
        "sufficient": None,
        "compression_ratio": 1.0,
        "evidence": evidence_rows(evidence),
        "trace": {"quoted": "the rationale sentences of the verified abstracts"},
    }


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
        r = _Run(require_query(question, "question"), question_type, on_event)
        candidates = self._retrieve(r, candidates)
        reranked, kept, table = self._rerank_and_filter(r, candidates)
        read = reranked if reranked is not None else candidates
        verification = self._verify(r, read, sentences)
        quoted = self._quotes(verification)
        ev, evidence = self._extract(r, kept, quoted)
        evidence = self._add_verified(r, evidence, read, verification)
        if quoted:  # the event still comes, so every ask streams the same stages
            r.emit("evidence", lambda: _quoted_event(evidence))
        answer = self._generate(r, candidates, table, ev, evidence, verification, quoted)
        return PipelineResult(
            r.question,
            candidates,
            reranked,
            kept,
            ev,
            answer,
            verification=verification,
            traces=r.traces,
            cost=r.cost,
        )

    def _retrieve(self, r: _Run, candidates: Ranking | None) -> Ranking:
        """The retrieve stage: the first stage's ``spec.depth`` candidates, or the given ones."""
        spec = self.spec
        with self._stage(r.cost, "retrieve"):
            if candidates is None:
                if self.retriever is None:
                    raise ScieraError(
                        f"retriever {CANDIDATES!r}: this pipeline needs the candidates given"
                    )
                candidates = self.retriever.search(r.question, spec.depth)
        found = candidates
        r.emit(
            "retrieved",
            lambda: {
                "first_stage": spec.retriever,
                "depth": spec.depth,
                "seconds": r.cost["retrieve"]["seconds"],
                "candidates": ranking_rows(found),
            },
        )
        return found

    def _rerank_and_filter(
        self, r: _Run, candidates: Ranking
    ) -> tuple[Ranking | None, Ranking, list[dict[str, Any]]]:
        """The rerank and filter stages: the reranked order (None without a reranker), the
        kept passages and the candidate table the ``reranked`` event and the answer show."""
        reranked: Ranking | None = None
        with self._stage(r.cost, "rerank"):
            if self.reranker is not None:
                reranked, r.traces["rerank"] = self.reranker.rerank_traced(
                    r.question, candidates.top(self.rerank_depth)
                )
        with self._stage(r.cost, "filter"):
            kept, r.traces["filter"] = self.filter.apply(
                reranked if reranked is not None else candidates
            )
        table = candidate_table(
            candidates, reranked if reranked is not None else candidates, r.traces["filter"]
        )
        r.emit(
            "reranked",
            lambda: {
                "reranker": self.spec.reranker or "none",
                "seconds": r.cost["rerank"]["seconds"] + r.cost["filter"]["seconds"],
                "candidates": table,
                "filter": _filter_summary(r.traces["filter"]),
                "trace": r.traces.get("rerank") or None,
            },
        )
        return reranked, kept, table

    def _verify(
        self, r: _Run, read: Ranking, sentences: SentenceSource | None
    ) -> Verification | None:
        """The verify stage over the reranked (or first-stage) order: claims and yes/no
        questions only (None for the others, or without a verifier)."""
        if self.verifier is None or not self._verifies(r.question, r.question_type):
            return None
        with self._stage(r.cost, "verify"):
            verification, r.traces["verify"] = self.verifier.verify(
                r.question, read, sentences=sentences
            )
        r.emit(
            "verified",
            lambda: {"seconds": r.cost["verify"]["seconds"], **verification_json(verification)},
        )
        return verification

    def _quotes(self, verification: Verification | None) -> bool:
        """Whether a verified question's rationales are quoted instead of the extractor's
        evidence (``verify.quote_only``)."""
        return (
            self.extractor is not None
            and verification is not None
            and self.spec.verify is not None
            and self.spec.verify.quote_only
        )

    def _extract(
        self, r: _Run, kept: Ranking, quoted: bool
    ) -> tuple[EvidenceResult | None, tuple[Evidence, ...]]:
        """The evidence stage: the extractor's result and evidence, or (no extractor, or the
        rationales quoted) no result and the kept passages as they are."""
        evidence = tuple(Evidence(it.passage, it.score) for it in kept)
        if self.extractor is None or quoted:
            return None, evidence
        extractor = self.extractor
        with self._stage(r.cost, "evidence"):
            ev = extractor.extract(r.question, kept)
        r.emit(
            "evidence",
            lambda: {
                "extractor": extractor.name,
                "seconds": r.cost["evidence"]["seconds"],
                "sufficient": ev.sufficient,
                "compression_ratio": ev.compression_ratio,
                "evidence": evidence_rows(ev.evidence),
                "trace": to_plain(ev.trace),
            },
        )
        return ev, ev.evidence

    def _add_verified(
        self,
        r: _Run,
        evidence: tuple[Evidence, ...],
        read: Ranking,
        verification: Verification | None,
    ) -> tuple[Evidence, ...]:
        """The evidence with the verified abstracts' rationales (:func:`with_rationales`), or,
        when nothing was kept and nothing verified, a checkable question's closest passages
        (:func:`closest_evidence`)."""
        if verification is not None:
            return with_rationales(evidence, verification, read)
        if not evidence and self._reads_closest(r.question, r.question_type):
            return closest_evidence(read, self.spec.filter.closest)
        return evidence

    def _generate(
        self,
        r: _Run,
        candidates: Ranking,
        table: list[dict[str, Any]],
        ev: EvidenceResult | None,
        evidence: tuple[Evidence, ...],
        verification: Verification | None,
        quoted: bool,
    ) -> Answer | None:
        """The generate stage: the answer (None without a generator), its trace holding the
        whole run's (``pipeline``)."""
        if self.generator is None:
            return None
        sufficient = ev.sufficient if ev is not None else None
        with self._stage(r.cost, "generate"):
            answer = self.generator.answer(
                r.question,
                evidence,
                r.question_type,
                sufficient=sufficient,
                verification=verification,
            )
        spec, cost, traces = self.spec, r.cost, r.traces
        info = {
            "first_stage": spec.retriever,
            "depth": spec.depth,
            "reranker": spec.reranker or "none",
            "evidence_extractor": (
                QUOTED if quoted else self.extractor.name if self.extractor else "none"
            ),
            "filter": _filter_summary(traces["filter"]),
            "candidates": table,
            "sufficient": sufficient,
            "compression_ratio": ev.compression_ratio if ev is not None else 1.0,
            "compression_ratio_candidates": compression_ratio(
                [it.passage.contents for it in candidates],
                "\n".join(e.text for e in evidence),
            ),
            "evidence_trace": to_plain(ev.trace) if ev is not None else {},
            "rerank_trace": traces.get("rerank") or None,
            "verification": (verification_json(verification) if verification is not None else None),
            "verify_trace": traces.get("verify"),
            "seconds": {k: v["seconds"] for k, v in cost.items()},
            "cost": cost,
        }
        answer = replace(answer, trace={**answer.trace, "pipeline": info})
        r.emit("answer", lambda: answer_json(answer))
        return answer

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
