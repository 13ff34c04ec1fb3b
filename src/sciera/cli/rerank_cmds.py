"""``sciera rerank "question" --corpus DIR``: first-stage retrieval, then a reranker."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Annotated, Any

import typer

from sciera.cli import app
from sciera.errors import ScieraError


def _settings(preset: str | None, **rerank: Any) -> Any:
    from pydantic import ValidationError

    from sciera.settings import load_settings

    overrides = {k: v for k, v in rerank.items() if v is not None}
    try:
        return load_settings(preset, rerank=overrides)
    except (ValidationError, ValueError) as exc:
        raise ScieraError(f"invalid settings: {exc}".replace("\n", " ")) from exc


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
    tau: Annotated[float | None, typer.Option(help="DeepEra threshold on the score.")] = None,
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
    no_filter: Annotated[bool, typer.Option("--no-filter", help="DeepEra ablation v2.")] = False,
    no_summary: Annotated[bool, typer.Option("--no-summary", help="DeepEra ablation v3.")] = False,
    reasons: Annotated[bool, typer.Option(help="DeepEra: ask for a one-line reason.")] = False,
    explain: Annotated[bool, typer.Option(help="Print DeepEra's full trace.")] = False,
    as_json: Annotated[bool, typer.Option("--json", help="Print JSON.")] = False,
    preset: Annotated[str | None, typer.Option(help="Settings preset (fast, quality).")] = None,
) -> None:
    """Retrieve candidates for QUESTION and rerank them; lists scores and filtered passages."""
    from sciera.errors import require_query
    from sciera.rerank.registry import make_reranker
    from sciera.retrieve.open import open_retriever

    question = require_query(question, "question")
    settings = _settings(
        preset,
        depth=depth,
        tau=tau,
        top_k=top_k,
        reranker=reranker,
        scorer=scorer,
        scorer_model=scorer_model,
    )
    name = settings.rerank.reranker
    kwargs: dict[str, Any] = {}
    if name == "deepera":
        kwargs = {
            "use_intent": not no_intent,
            "use_filter": not no_filter,
            "use_summary": not no_summary,
            "with_reason": reasons,
        }
    elif model is not None:
        kwargs["model"] = model
    candidates = open_retriever(corpus, first_stage, settings).search(
        question, settings.rerank.depth
    )
    rr = make_reranker(name, settings, **kwargs)
    trace = None
    if name == "deepera":
        ranked, trace = rr.rerank_with_trace(question, candidates)  # type: ignore[attr-defined]
    else:
        ranked = rr.rerank(question, candidates)
        ranked = ranked.top(settings.rerank.top_k)

    if as_json:
        out: dict[str, Any] = {
            "question": question,
            "reranker": name,
            "first_stage": first_stage,
            "results": [
                {
                    "rank": it.rank,
                    "passage_id": it.passage_id,
                    "score": it.score,
                    "title": it.passage.title,
                    "summary": it.provenance.get(name, {}).get("summary", ""),
                }
                for it in ranked
            ],
        }
        if trace is not None:
            out["filtered"] = [
                {"passage_id": p.passage_id, "score": p.score, "why": p.filter_reason}
                for p in trace.passages
                if not p.kept
            ]
            if explain:
                out["trace"] = trace.to_dict()
        typer.echo(json.dumps(out, indent=2, ensure_ascii=False))
        return

    typer.echo(f"{name} over {first_stage} top-{settings.rerank.depth}: {len(ranked)} passages")
    for it in ranked:
        typer.echo(f"{it.rank:>3}. {it.score:.3f}  {it.passage_id}  {_snippet(it.passage.title)}")
        summary = it.provenance.get(name, {}).get("summary", "")
        if summary:
            typer.echo(f"       summary: {_snippet(summary, 110)}")
    if trace is None:
        return
    filtered = [p for p in trace.passages if not p.kept]
    if filtered:
        typer.echo(f"filtered ({len(filtered)}):")
        for p in filtered:
            typer.echo(f"       {p.score:.3f}  {p.passage_id}  {p.filter_reason}")
    typer.echo(f"scores: {trace.score_source}")
    if explain:
        typer.echo(trace.to_json())
