"""``sciera rerank "question" --corpus DIR``: first-stage retrieval, then a reranker."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Annotated, Any

import typer

from sciera.cli.base import app, options_settings

OPTIONS = {"filter.top_k": "--top-k", "filter.tau": "--tau", "rerank.depth": "--depth"}
"""Setting path -> the option that sets it, named in a one-line error."""


def _snippet(text: str, width: int = 90) -> str:
    text = " ".join(text.split())
    return text if len(text) <= width else text[: width - 3] + "..."


@app.command("rerank")
def rerank(
    question: Annotated[str, typer.Argument(help="The question (or claim) to find evidence for.")],
    corpus: Annotated[Path, typer.Option("--corpus", help="Corpus directory (ingested, indexed).")],
    first_stage: Annotated[
        str, typer.Option("--first-stage", help="bm25 | dense | hybrid")
    ] = "hybrid",
    depth: Annotated[int | None, typer.Option(help="First-stage candidates to rerank.")] = None,
    reranker: Annotated[
        str | None, typer.Option(help="Reranker name (see sciera.rerank.registry).")
    ] = None,
    tau: Annotated[
        float | None, typer.Option(help="Keep passages with calibrated P(relevant) >= tau.")
    ] = None,
    scorer: Annotated[
        str | None,
        typer.Option(help="DeepEra's relevance scorer: llm | cross_encoder (trained, fast)."),
    ] = None,
    scorer_model: Annotated[
        str | None, typer.Option("--scorer-model", help="Cross-encoder for --scorer.")
    ] = None,
    top_k: Annotated[int | None, typer.Option("--top-k", help="Passages kept.")] = None,
    model: Annotated[
        str | None, typer.Option(help="Cross-encoder model name or local path (cross_encoder).")
    ] = None,
    no_intent: Annotated[bool, typer.Option("--no-intent", help="DeepEra ablation v1.")] = False,
    no_filter: Annotated[
        bool, typer.Option("--no-filter", help="No tau, only --top-k (DeepEra ablation v2).")
    ] = False,
    reasons: Annotated[bool, typer.Option(help="DeepEra: ask for a one-line reason.")] = False,
    explain: Annotated[bool, typer.Option(help="Print the reranker's full trace.")] = False,
    as_json: Annotated[bool, typer.Option("--json", help="Print JSON.")] = False,
    preset: Annotated[str | None, typer.Option(help="Settings preset (fast, quality).")] = None,
) -> None:
    """Retrieve candidates for QUESTION, rerank and filter them as `ask` does; lists the
    kept passages with their scores, and the filtered ones with why."""
    from sciera.errors import require_query
    from sciera.pipeline import CANDIDATES, PipelineSpec, build_pipeline
    from sciera.retrieve.open import open_retriever

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
    result = pipeline.run(question, candidates=candidates)
    name, kept, ranked = spec.reranker, result.kept, result.reranked
    assert ranked is not None
    decisions = result.traces["filter"]
    scores = {it.passage_id: it.score for it in ranked}
    filtered = [d for d in decisions["decisions"] if not d["kept"]]
    trace = result.traces.get("rerank") or None

    if as_json:
        out: dict[str, Any] = {
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
                for it in kept
            ],
            "filtered": [
                {"passage_id": d["passage_id"], "score": scores[d["passage_id"]], "why": d["why"]}
                for d in filtered
            ],
        }
        if explain and trace is not None:
            out["trace"] = trace
        typer.echo(json.dumps(out, indent=2, ensure_ascii=False))
        return

    typer.echo(f"{name} over {first_stage} top-{settings.rerank.depth}: {len(kept)} passages")
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
