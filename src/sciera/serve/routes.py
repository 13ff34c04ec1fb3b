"""The ``/v1`` endpoints: corpora, search, rerank, ask and verify (JSON or Server-Sent Events), and
the experiment reports.

Retrieval runs in Starlette's thread pool; anything that calls the LLM (``ask``, an LLM
reranker) goes through the :class:`~sciera.serve.queue.LLMGate`, one job at a time, and is
cancelled when its client disconnects.
"""

from __future__ import annotations

import contextlib
import logging
import threading
from typing import Any
from urllib.parse import quote

import anyio.from_thread
from fastapi import APIRouter, Request, Response
from fastapi.responses import FileResponse
from starlette.concurrency import run_in_threadpool

from sciera.errors import ScieraError
from sciera.serve import operations
from sciera.serve.errors import public
from sciera.serve.experiments import Experiments
from sciera.serve.operations import ASK_EVENTS, VERIFY_EVENTS
from sciera.serve.queue import Cancelled, LLMGate, QueueFull, unless_disconnected
from sciera.serve.resources import Resources
from sciera.serve.schemas import (
    AskRequest,
    AskResponse,
    CorpusInfo,
    DocumentResponse,
    ErrorBody,
    RerankRequest,
    RerankResponse,
    SearchRequest,
    SearchResponse,
    VerifyRequest,
    VerifyResponse,
)
from sciera.serve.sse import Emit, EventStream
from sciera.serve.ssli_view import SSLIView

log = logging.getLogger("sciera.serve")

PREFIX = "/v1"
CLIENT_GONE = 499  # nginx's "client closed request": nobody reads it

_ERRORS: dict[int | str, dict[str, Any]] = {
    code: {"model": ErrorBody} for code in (400, 401, 404, 422, 500)
}
_BUSY: dict[int | str, dict[str, Any]] = {
    503: {"model": ErrorBody, "description": "The LLM queue is full; see Retry-After."}
}


def wants_events(request: Request) -> bool:
    return "text/event-stream" in request.headers.get("accept", "")


def api_router(res: Resources, gate: LLMGate) -> APIRouter:
    """Corpora, search, rerank, ask and verify over ``res``; LLM work through ``gate``."""
    router = APIRouter(prefix=PREFIX, responses=_ERRORS)

    @router.get("/corpora", response_model=list[CorpusInfo])
    def corpora() -> list[dict[str, Any]]:
        """The served corpora: counts and indexes (the first is the default)."""
        return [res.describe(name) for name in res.corpora]

    @router.get("/corpora/{name}/documents/{doc_id:path}", response_model=DocumentResponse)
    def document(name: str, doc_id: str) -> dict[str, Any]:
        """A document's passages in order with their sections: a cited passage in its
        paper's context."""
        return res.document(res.resolve(name), doc_id)

    @router.post("/search", response_model=SearchResponse)
    def search(body: SearchRequest) -> dict[str, Any]:
        """First-stage retrieval: the top-k passages for the query."""
        return operations.search(res, body)

    @router.post("/rerank", response_model=RerankResponse, responses=_BUSY)
    async def rerank(body: RerankRequest, request: Request) -> Any:
        """First-stage candidates (depth) reranked; DeepEra also lists what it filtered."""
        job, uses_llm = operations.rerank_job(res, body)
        if not uses_llm:
            return await run_in_threadpool(job, threading.Event())
        result = await unless_disconnected(request.receive, lambda: gate.run(job))
        return Response(status_code=CLIENT_GONE) if result is None else result

    @router.post(
        "/ask",
        response_model=AskResponse,
        responses={
            **_BUSY,
            200: {
                "content": {"text/event-stream": {}},
                "description": "The answer; with stream (or Accept: text/event-stream) "
                f"the events {', '.join(ASK_EVENTS)} (or error), each with JSON data.",
            },
        },
    )
    async def ask(body: AskRequest, request: Request) -> Any:
        """Answer the question with citations (the full pipeline; uses the LLM)."""
        if body.stream or wants_events(request):
            res.resolve(body.corpus)  # an unknown corpus is a 404 before the stream starts
            gate.check()  # a full queue is a 503 before the stream starts
            return EventStream(lambda emit: _ask_stream(res, gate, body, emit))
        job = operations.ask_job(res, body)
        result = await unless_disconnected(request.receive, lambda: gate.run(job))
        return Response(status_code=CLIENT_GONE) if result is None else result

    @router.post(
        "/verify",
        response_model=VerifyResponse,
        responses={
            **_BUSY,
            200: {
                "content": {"text/event-stream": {}},
                "description": "The verification; with stream (or Accept: text/event-stream) "
                f"the events {', '.join(VERIFY_EVENTS)} (or error), each with JSON data.",
            },
        },
    )
    async def verify(body: VerifyRequest, request: Request) -> Any:
        """Verify the claim: per top-ranked abstract SUPPORT / CONTRADICT / NOT ENOUGH INFO
        with its rationale sentences (verbatim, with indices), and the overall verdict."""
        if body.stream or wants_events(request):
            res.resolve(body.corpus)
            gate.check()
            return EventStream(
                lambda emit: _stream(gate, operations.verify_job, res, body, emit, "verify")
            )
        job = operations.verify_job(res, body)
        result = await unless_disconnected(request.receive, lambda: gate.run(job))
        return Response(status_code=CLIENT_GONE) if result is None else result

    return router


async def _ask_stream(res: Resources, gate: LLMGate, body: AskRequest, emit: Emit) -> None:
    """Run the pipeline, forwarding each stage event; a failure becomes an ``error`` event."""
    await _stream(gate, operations.ask_job, res, body, emit, "ask")


async def _stream(
    gate: LLMGate, make_job: Any, res: Resources, body: Any, emit: Emit, route: str
) -> None:
    """Run a job, forwarding each stage event; a failure becomes an ``error`` event."""
    job = make_job(res, body, lambda name, payload: anyio.from_thread.run(emit, name, payload))
    try:
        await gate.run(job)
        return
    except (ScieraError, QueueFull, Cancelled) as exc:
        message = public(exc, res.corpora)
    except Exception as exc:
        log.error("POST %s/%s (stream) failed", PREFIX, route, exc_info=exc)
        message = "internal error; the server log has the details"
    with contextlib.suppress(Exception):  # the client may be gone too
        await emit("error", {"error": message})


def experiments_router(experiments: Experiments) -> APIRouter:
    """``/v1/experiments``: the reports of ``sciera eval run`` in the experiments folder."""
    router = APIRouter(prefix=PREFIX, responses=_ERRORS)

    def with_urls(info: dict[str, Any]) -> dict[str, Any]:
        name = quote(info["name"], safe="")
        urls = [
            {"name": f, "url": f"{PREFIX}/experiments/{name}/plots/{quote(f, safe='')}"}
            for f in info.get("plots", [])
        ]
        return {**info, "plots": urls}

    @router.get("/experiments")
    def list_experiments() -> list[dict[str, Any]]:
        """Every results directory: experiment, dataset, pipelines, plots."""
        return [with_urls(experiments.summary(n)) for n in experiments.names()]

    @router.get("/experiments/{name}")
    def read_experiment(name: str) -> dict[str, Any]:
        """One experiment: its spec, plan, table (JSON and Markdown), significance, plots."""
        return with_urls(experiments.detail(name))

    @router.get(
        "/experiments/{name}/plots/{file}",
        response_class=FileResponse,
        responses={200: {"content": {"image/png": {}}}},
    )
    def experiment_plot(name: str, file: str) -> FileResponse:
        """A PNG plot of the report."""
        return FileResponse(experiments.plot(name, file), media_type="image/png")

    ssli = SSLIView(experiments)

    @router.get("/experiments/{name}/ssli")
    def ssli_questions(name: str) -> list[dict[str, Any]]:
        """An SSLI experiment's questions (ssli setting), with each pipeline's best gold rank."""
        return ssli.questions(name)

    @router.get("/experiments/{name}/ssli/{qid:path}")
    def ssli_question(name: str, qid: str) -> dict[str, Any]:
        """One SSLI question: gold passages and distractors with every pipeline's score."""
        return ssli.question(name, qid)

    return router
