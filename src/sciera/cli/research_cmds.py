"""``sciera research "question" --corpus DIR``: the multi-step research agent."""

from __future__ import annotations

import json
from pathlib import Path
from typing import TYPE_CHECKING, Annotated

import typer

from sciera.cli.base import app, options_settings
from sciera.cli.options import CorpusOpt, FirstStageOpt, PresetOpt, QuestionTypeOpt
from sciera.research.api import RESEARCH_N_CTX

if TYPE_CHECKING:
    from sciera.research.trace import Run


@app.command("research")
def research(
    question: Annotated[str, typer.Argument(help="The scientific question.")],
    corpus: CorpusOpt,
    max_steps: Annotated[int, typer.Option("--max-steps", help="Agent turns at most.")] = 8,
    budget_tokens: Annotated[
        int | None,
        typer.Option("--budget-tokens", help="Prompt + completion tokens of the agent's calls."),
    ] = None,
    max_seconds: Annotated[
        float | None, typer.Option("--max-seconds", help="Wall time of the agent loop.")
    ] = None,
    reranker: Annotated[
        str | None, typer.Option(help="Reranker after the first stage (default: none).")
    ] = None,
    depth: Annotated[int, typer.Option(help="Candidates reranked: 10 | 20 | 50.")] = 10,
    q2q: Annotated[
        str, typer.Option("--q2q", help="Query-to-question rewriting: none | q | q+r.")
    ] = "none",
    lexical_raw: Annotated[
        bool,
        typer.Option("--lexical-raw/--lexical-question", help="BM25 gets the raw query."),
    ] = True,
    top_k: Annotated[
        int | None, typer.Option("--top-k", help="Evidence passages for the answer.")
    ] = None,
    n_ctx: Annotated[
        int,
        typer.Option(
            "--n-ctx", help="LLM context window for the run (every search's passages stay in it)."
        ),
    ] = RESEARCH_N_CTX,
    extract: Annotated[
        str,
        typer.Option(
            "--extract",
            help="Per-step evidence extraction (EviOmni): none | rational | vanilla; a "
            "'sufficient' verdict ends the run with an answer.",
        ),
    ] = "none",
    first_stage: FirstStageOpt = None,
    qtype: QuestionTypeOpt = None,
    preset: PresetOpt = None,
    as_json: Annotated[bool, typer.Option("--json", help="Print the run as JSON.")] = False,
    explain: Annotated[bool, typer.Option(help="Print every step of the run.")] = False,
    trace: Annotated[
        Path | None, typer.Option("--trace", help="Write the run as JSONL (steps + final).")
    ] = None,
) -> None:
    """Answer QUESTION by searching, reading and searching again; cited like `ask`."""
    from sciera.errors import require_query
    from sciera.llm.registry import make_llm
    from sciera.research.api import ResearchOptions, build_agent

    question = require_query(question, "question")  # before any model loads
    options = ResearchOptions(
        max_steps=max_steps,
        budget_tokens=budget_tokens,
        max_seconds=max_seconds,
        reranker=reranker,
        depth=depth,
        q2q=q2q,
        lexical_raw=lexical_raw,
        top_k=top_k,
        extract=None if extract == "none" else extract,
    )
    settings = options_settings(
        preset,
        {"retrieve": {"retriever": first_stage}, "llm": {"n_ctx": n_ctx}},
        {"llm.n_ctx": "--n-ctx"},
    )
    agent = build_agent(corpus, settings, make_llm(settings), options)
    run = agent.run(question, None if qtype in (None, "auto") else qtype)
    _show(run, trace, as_json, explain)


def _show(run: Run, trace: Path | None, as_json: bool, explain: bool) -> None:
    """Write the run to ``trace`` (JSONL) if given, then print it: as JSON, or the answer as
    `ask` prints it, why the agent stopped and, with ``explain``, every step."""
    from sciera.cli.ask_cmds import _print
    from sciera.pipeline import answer_json
    from sciera.research.trace import explain_lines, write_trace

    if trace is not None:
        write_trace(run, trace)
    if as_json:
        typer.echo(json.dumps(run.to_dict(), indent=2, ensure_ascii=False))
        return
    _print(answer_json(run.answer), explain=False)
    typer.echo(
        f"stopped by {run.stopped_by}{' (partial answer)' if run.partial else ''}; "
        f"{run.search_calls} searches"
    )
    if explain:
        for line in explain_lines(run):
            typer.echo(line)
