"""What the HTTP API and the MCP server do for a search and a rerank request, shared by
both: the transport (routes, tools) only decides where the work runs and how it is sent."""

from __future__ import annotations

import threading
from collections.abc import Callable
from typing import Any

from sciera.pipeline import ranking_rows
from sciera.serve.queue import checkpoint
from sciera.serve.resources import Resources
from sciera.serve.schemas import RerankRequest, SearchRequest
from sciera.types import Ranking

Job = Callable[[threading.Event], dict[str, Any]]


def hits(ranking: Ranking) -> list[dict[str, Any]]:
    """A ranking as JSON rows with provenance; passage text is data, returned as stored."""
    return ranking_rows(ranking, provenance=True)


def search(res: Resources, body: SearchRequest) -> dict[str, Any]:
    """The first stage's top-k passages for the query (blocking; no LLM)."""
    corpus = res.resolve(body.corpus)
    name = body.retriever or res.settings.retrieve.retriever
    with res.retriever(corpus, name) as retriever:
        ranking = retriever.search(body.query, body.k)
    return {"query": body.query, "corpus": corpus, "retriever": name, "items": hits(ranking)}


def rerank_job(res: Resources, body: RerankRequest) -> tuple[Job, bool]:
    """(the job, whether it uses the LLM): ``depth`` first-stage candidates reranked, the
    best k kept; DeepEra also lists what it filtered, with its trace. Names are resolved
    (and bad ones refused) before anything runs."""
    corpus = res.resolve(body.corpus)
    first = body.retriever or res.settings.retrieve.retriever
    name = body.reranker or res.settings.rerank.reranker

    def job(cancelled: threading.Event) -> dict[str, Any]:
        with res.retriever(corpus, first) as retriever:
            candidates = retriever.search(body.query, body.depth)
        checkpoint(cancelled)
        trace = None
        with res.reranker(name) as reranker:
            if hasattr(reranker, "rerank_with_trace"):
                ranked, deepera = reranker.rerank_with_trace(body.query, candidates)
                trace = deepera.to_dict()
            else:
                ranked = reranker.rerank(body.query, candidates)
        filtered = [
            {"passage_id": p["passage_id"], "score": p["score"], "why": p["filter_reason"]}
            for p in (trace or {}).get("passages", [])
            if not p["kept"]
        ]
        return {
            "query": body.query,
            "corpus": corpus,
            "first_stage": first,
            "depth": body.depth,
            "reranker": name,
            "items": hits(ranked.top(body.k)),
            "filtered": filtered,
            "trace": trace,
        }

    return job, res.reranker_uses_llm(name)
