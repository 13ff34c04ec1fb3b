"""What the HTTP API and the MCP server do for a search, a rerank and an ask request,
shared by both: the transport (routes, tools) only decides where the work runs and how
results and stage events are sent."""

from __future__ import annotations

import threading
from collections.abc import Callable, Sequence
from typing import TYPE_CHECKING, Any

from sciera.errors import ScieraError
from sciera.pipeline import ranking_rows
from sciera.rerank.registry import RERANKERS
from sciera.retrieve.sections import keep_sections
from sciera.serve.queue import checkpoint
from sciera.serve.resources import Resources
from sciera.serve.schemas import AskRequest, RerankRequest, SearchRequest, VerifyRequest
from sciera.types import Ranking

if TYPE_CHECKING:
    from sciera.pipeline import Pipeline

Job = Callable[[threading.Event], dict[str, Any]]
Forward = Callable[[str, dict[str, Any]], None]

ASK_EVENTS = ("retrieved", "reranked", "evidence", "answer")
"""The stage events of an ask, in order (``Pipeline.run(on_event=...)``); a claim or yes/no
question also has ``verified`` after ``reranked``."""
VERIFY_EVENTS = ("retrieved", "reranked", "verified")
"""The stage events of a verify, in order."""


def hits(ranking: Ranking) -> list[dict[str, Any]]:
    """A ranking as JSON rows with provenance; passage text is data, returned as stored."""
    return ranking_rows(ranking, provenance=True)


def search(res: Resources, body: SearchRequest) -> dict[str, Any]:
    """The first stage's top-k passages for the query (blocking; no LLM)."""
    corpus = res.resolve(body.corpus)
    name = body.retriever or res.settings.retrieve.retriever
    with res.retriever(corpus, name) as retriever:
        ranking = keep_sections(retriever, body.sections).search(body.query, body.k)
    return {"query": body.query, "corpus": corpus, "retriever": name, "items": hits(ranking)}


def rerank_job(res: Resources, body: RerankRequest) -> tuple[Job, bool]:
    """(the job, whether it uses the LLM): ``depth`` first-stage candidates reranked and
    filtered as ``ask`` filters them (tau over calibrated scores), the best k of the kept
    listed, with what the filter dropped and why, and the reranker's own trace (DeepEra:
    intent and every passage's score). Names are resolved (and bad ones refused) before
    anything runs."""
    corpus = res.resolve(body.corpus)
    first = body.retriever or res.settings.retrieve.retriever
    name = body.reranker or res.settings.rerank.reranker
    if name not in RERANKERS:  # a server set up without one (rerank.reranker = none)
        raise ScieraError(
            f"this server has no default reranker ({name!r}); name one in 'reranker': "
            + ", ".join(sorted(RERANKERS))
        )

    def job(cancelled: threading.Event) -> dict[str, Any]:
        with res.retriever(corpus, first) as retriever:
            candidates = keep_sections(retriever, body.sections).search(body.query, body.depth)
        checkpoint(cancelled)
        with res.reranker(name) as reranker:
            ranked, trace = reranker.rerank_traced(body.query, candidates)
        kept, decisions = res.filter().apply(ranked)
        scores = {it.passage_id: it.score for it in ranked}
        filtered = [
            {"passage_id": d["passage_id"], "score": scores[d["passage_id"]], "why": d["why"]}
            for d in decisions["decisions"]
            if not d["kept"]
        ]
        return {
            "query": body.query,
            "corpus": corpus,
            "first_stage": first,
            "depth": body.depth,
            "reranker": name,
            "items": hits(kept.top(body.k)),
            "filtered": filtered,
            "filter": {k: v for k, v in decisions.items() if k != "decisions"},
            "trace": trace or None,
        }

    return job, res.reranker_uses_llm(name)


def ask_job(res: Resources, body: AskRequest, forward: Forward | None = None) -> Job:
    """The answering pipeline for ``body`` as a job: every stage event is a cancellation
    checkpoint and goes to ``forward`` (a stream, progress reports); the job returns the
    ``answer`` event's payload (:func:`sciera.pipeline.answer_json`). The corpus is
    resolved (an unknown one refused) before anything runs."""
    corpus = res.resolve(body.corpus)

    def job(cancelled: threading.Event) -> dict[str, Any]:
        answer: dict[str, Any] = {}

        def on_event(name: str, payload: dict[str, Any]) -> None:
            checkpoint(cancelled)
            if name == "answer":
                answer.update(payload)
            if forward is not None:
                forward(name, payload)

        with res.pipeline(corpus) as pipe:
            pool = _section_pool(pipe, body.question, body.sections)
            pipe.run(body.question, body.question_type, candidates=pool, on_event=on_event)
        return answer

    return job


def verify_job(res: Resources, body: VerifyRequest, forward: Forward | None = None) -> Job:
    """Verification of ``body.claim`` as a job (:func:`sciera.pipeline.verify_spec`'s
    pipeline): every stage event is a cancellation checkpoint and goes to ``forward``; the
    job returns the ``verified`` event's verification. The corpus is resolved first."""
    corpus = res.resolve(body.corpus)

    def job(cancelled: threading.Event) -> dict[str, Any]:
        from sciera.verify.stage import verification_json

        def on_event(name: str, payload: dict[str, Any]) -> None:
            checkpoint(cancelled)
            if forward is not None:
                forward(name, payload)

        with res.verifier(corpus) as pipe:
            pool = _section_pool(pipe, body.claim, body.sections)
            result = pipe.run(body.claim, "yesno", candidates=pool, on_event=on_event)
        assert result.verification is not None
        return verification_json(result.verification)

    return job


def _section_pool(pipe: Pipeline, question: str, sections: Sequence[str] | None) -> Ranking | None:
    """The pipeline's own first stage kept to ``sections`` (None: the pipeline retrieves)."""
    if not sections or pipe.retriever is None:
        return None
    return keep_sections(pipe.retriever, sections).search(question, pipe.spec.depth)
