"""``sciera rerank "question" --corpus DIR``: first-stage retrieval, then a reranker."""

from __future__ import annotations

import json
from pathlib import Path
from typing import TYPE_CHECKING, Annotated, Any

import typer

from sciera.cli.base import app, options_settings
from sciera.cli.options import (
    CorpusOpt,
    DepthOpt,
    ExplainOpt,
    JsonOpt,
    PresetOpt,
    ScorerModelOpt,
    ScorerOpt,
    TauOpt,
    TopKOpt,
)

if TYPE_CHECKING:
    from sciera.pipeline import PipelineResult
    from sciera.settings import Settings

OPTIONS = {"filter.top_k": "--top-k", "filter.tau": "--tau", "rerank.depth": "--depth"}
"""Setting path -> the option that sets it, named in a one-line error."""


def _snippet(text: str, width: int = 90) -> str:
    text = " ".join(text.split())
    return text if len(text) <= width else text[: width - 3] + "..."


@app.command("rerank")
def rerank(
    question: Annotated[str, typer.Argument(help="The question (or claim) to find evidence for.")],
    corpus: CorpusOpt,
    first_stage: Annotated[
        str, typer.Option("--first-stage", help="bm25 | dense | hybrid")
    ] = "hybrid",
    depth: DepthOpt = None,
    reranker: Annotated[
        str | None, typer.Option(help="Reranker name (see sciera.rerank.registry).")
    ] = None,
    tau: TauOpt = None,
    scorer: ScorerOpt = None,
    scorer_model: ScorerModelOpt = None,
    top_k: TopKOpt = None,
    model: Annotated[
        str | None, typer.Option(help="Cross-encoder model name or local path (cross_encoder).")
    ] = None,
    no_intent: Annotated[bool, typer.Option("--no-intent", help="DeepEra ablation v1.")] = False,
    no_filter: Annotated[
        bool, typer.Option("--no-filter", help="No tau, only --top-k (DeepEra ablation v2).")
    ] = False,
    reasons: Annotated[bool, typer.Option(help="DeepEra: ask for a one-line reason.")] = False,
    explain: ExplainOpt = False,
    as_json: JsonOpt = False,
    preset: PresetOpt = None,
) -> None:
    """Retrieve candidates for QUESTION, rerank and filter them as `ask` does; lists the
    kept passages with their scores, and the filtered ones with why."""
    from sciera.errors import require_query

    question = require_query(question, "question")
    settings = options_settings(
        preset,
        {
            "rerank": {"depth": depth, "reranker": reranker},
            "filter": {"tau": tau, "top_k": top_k, "use_tau": False if no_filter else None},
            "deepera": {
                "scorer": scorer,
                "scorer_model": scorer_model,
                "use_intent": False if no_intent else None,
                "with_reason": reasons or None,
            },
        },
        OPTIONS,
    )
    name, result = _run(question, corpus, first_stage, model, settings)
    trace = result.traces.get("rerank") or None
    if as_json:
        out = _json(question, name, first_stage, result)
        if explain and trace is not None:
            out["trace"] = trace
        typer.echo(json.dumps(out, indent=2, ensure_ascii=False))
        return
    _print(name, f"{first_stage} top-{settings.rerank.depth}", result, trace, explain)


def _run(
    question: str, corpus: Path, first_stage: str, model: str | None, settings: Settings
) -> tuple[str, PipelineResult]:
    """The first stage's candidates for ``question``, reranked and filtered by the pipeline
    ``ask`` runs (candidates given); the reranker's name and the run."""
    from sciera.pipeline import CANDIDATES, PipelineSpec, build_pipeline
    from sciera.retrieve.open import open_retriever

    spec = PipelineSpec(
        retriever=CANDIDATES,
        reranker=settings.rerank.reranker,
        reranker_params={} if model is None else {"model": model},
        filter=settings.filter,
    )
    pipeline = build_pipeline(spec, settings)
    candidates = open_retriever(corpus, first_stage, settings).search(
        question, settings.rerank.depth
    )
    return spec.reranker, pipeline.run(question, candidates=candidates)


def _filtered(result: PipelineResult) -> tuple[dict[str, float], list[dict[str, Any]]]:
    """Each reranked passage's score, and the filter's decisions on the passages it dropped."""
    ranked = result.reranked
    assert ranked is not None
    scores = {it.passage_id: it.score for it in ranked}
    return scores, [d for d in result.traces["filter"]["decisions"] if not d["kept"]]


def _json(question: str, name: str, first_stage: str, result: PipelineResult) -> dict[str, Any]:
    """``--json``: the kept passages and the filtered ones with why."""
    scores, filtered = _filtered(result)
    decisions = result.traces["filter"]
    return {
        "question": question,
        "reranker": name,
        "first_stage": first_stage,
        "filter": {"tau": decisions["tau"], "top_k": decisions["top_k"]},
        "results": [
            {
                "rank": it.rank,
                "passage_id": it.passage_id,
                "score": it.score,
                "title": it.passage.title,
            }
            for it in result.kept
        ],
        "filtered": [
            {"passage_id": d["passage_id"], "score": scores[d["passage_id"]], "why": d["why"]}
            for d in filtered
        ],
    }


def _print(
    name: str, first: str, result: PipelineResult, trace: dict[str, Any] | None, explain: bool
) -> None:
    """The kept passages (``first``: the first stage and its depth), then the filtered ones
    with why, where the scores came from, and with ``explain`` the reranker's trace."""
    scores, filtered = _filtered(result)
    kept = result.kept
    typer.echo(f"{name} over {first}: {len(kept)} passages")
    for it in kept:
        where = f"  [{it.passage.section}]" if it.passage.section else ""
        typer.echo(
            f"{it.rank:>3}. {it.score:.3f}  {it.passage_id}{where}  {_snippet(it.passage.title)}"
        )
    if filtered:
        typer.echo(f"filtered ({len(filtered)}):")
        for d in filtered:
            typer.echo(f"       {scores[d['passage_id']]:.3f}  {d['passage_id']}  {d['why']}")
    if trace is not None and trace.get("score_source"):
        typer.echo(f"scores: {trace['score_source']}")
    if explain and trace is not None:
        typer.echo(json.dumps(trace, indent=2, ensure_ascii=False))
