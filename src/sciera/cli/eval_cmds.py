"""``sciera eval ...``: score pipeline stages against relevance judgments."""

from __future__ import annotations

import json
from functools import partial
from pathlib import Path
from typing import TYPE_CHECKING, Annotated

import typer

from sciera.cli.base import app
from sciera.cli.options import CorpusOpt, PresetOpt
from sciera.cli.ray_opts import RayCpusOpt, RayOpt, RayWorkersOpt, ShardOpt, ray_executor
from sciera.progress import step_progress

if TYPE_CHECKING:
    from sciera.eval.retrieval import RetrievalEval

eval_app = typer.Typer(help="Evaluate pipeline stages against relevance judgments.")
app.add_typer(eval_app, name="eval")

_DEFAULT_METRICS = "ndcg@10,recall@100,map@10,mrr@10"


# `eval retrieval`'s options with long help texts (the others are declared in its signature).
_UnitOpt = Annotated[
    str,
    typer.Option(
        "--unit",
        help="document: Max-P over passages, judged as is; passage: passages inherit "
        "their document's grade.",
    ),
]
_RerankerOpt = Annotated[
    str | None,
    typer.Option(
        "--reranker",
        help="Rerank the first stage's top candidates with this "
        "reranker (e.g. cross_encoder, embedding, deepera).",
    ),
]
_EmbedderOpt = Annotated[
    str | None,
    typer.Option(
        "--embedder",
        help="Dense/hybrid embedder: scifact-minilm (default), minilm, e5 or "
        "sentence-transformers.",
    ),
]
_EmbedderModelOpt = Annotated[
    str | None,
    typer.Option(
        "--embedder-model",
        help="Model for --embedder sentence-transformers: a trained name or a path.",
    ),
]


@eval_app.command("retrieval")
def retrieval(
    corpus: CorpusOpt,
    queries: Annotated[
        Path, typer.Option("--queries", help="BEIR queries.jsonl, or a BEIR folder holding it.")
    ],
    qrels: Annotated[Path, typer.Option("--qrels", help="BEIR (.tsv) or TREC qrels file.")],
    retriever: Annotated[
        str | None,
        typer.Option("--retriever", help="bm25, dense or hybrid (default: settings)."),
    ] = None,
    metrics: Annotated[
        str, typer.Option("--metrics", help="Comma-separated metric specs, e.g. ndcg@10,map@10.")
    ] = _DEFAULT_METRICS,
    unit: _UnitOpt = "document",
    depth: Annotated[
        int | None,
        typer.Option("--depth", min=1, help="Run depth (default: largest cutoff, at least 100)."),
    ] = None,
    run_out: Annotated[
        Path | None, typer.Option("--run-out", help="Write the run as a TREC run file.")
    ] = None,
    reranker: _RerankerOpt = None,
    rerank_depth: Annotated[
        int | None,
        typer.Option("--rerank-depth", min=1, help="Candidates reranked (default: settings, 30)."),
    ] = None,
    model: Annotated[
        str | None,
        typer.Option("--model", help="Reranker model: a shipped or trained name, or a path."),
    ] = None,
    embedder: _EmbedderOpt = None,
    embedder_model: _EmbedderModelOpt = None,
    as_json: Annotated[bool, typer.Option("--json", help="Print one JSON object.")] = False,
    per_query: Annotated[
        bool, typer.Option("--per-query", help="With --json: include per-query scores.")
    ] = False,
    preset: PresetOpt = None,
) -> None:
    """Search every judged query and print nDCG@10, Recall@100, MAP@10 and MRR@10
    (or --metrics), with trec_eval semantics; qrels queries missing from the run count 0."""
    from sciera.eval.retrieval import evaluate_retrieval
    from sciera.settings import load_settings

    specs = _metric_specs(metrics, unit)
    embed = {k: v for k, v in (("backend", embedder), ("model", embedder_model)) if v}
    settings = load_settings(preset, **({"embed": embed} if embed else {}))
    with step_progress() as step:
        update = partial(step, "searching")
        result = evaluate_retrieval(
            corpus,
            queries,
            qrels,
            retriever=retriever,
            metrics=specs,
            unit=unit,  # type: ignore[arg-type]
            depth=depth,
            settings=settings,
            progress=update,
            reranker=reranker,
            rerank_depth=rerank_depth,
            reranker_options={"model": model} if model else None,
        )
    if run_out is not None:
        _write_run(run_out, result)
    _print_retrieval(result, as_json, per_query)


def _metric_specs(metrics: str, unit: str) -> list[str]:
    """``--metrics`` as specs, and ``--unit``, checked before any search (a bad one is a
    usage error naming its option)."""
    from sciera.eval.metrics.evaluate import parse_metrics
    from sciera.eval.retrieval import UNITS

    specs = [m.strip() for m in metrics.split(",") if m.strip()]
    try:
        parse_metrics(specs, "query")
    except ValueError as exc:
        raise typer.BadParameter(str(exc), param_hint="--metrics") from None
    if unit not in UNITS:
        raise typer.BadParameter(f"choose one of {', '.join(UNITS)}", param_hint="--unit")
    return specs


def _write_run(path: Path, result: RetrievalEval) -> None:
    """``--run-out``: the run as a TREC run file, tagged by the retriever."""
    from sciera.eval.retrieval import write_trec_run

    tag = "sciera-" + "".join(c if c.isalnum() or c in "-_.@" else "_" for c in result.retriever)
    lines = write_trec_run(path, result.run, tag=tag)
    typer.echo(f"wrote {lines} lines to {path}", err=True)


def _print_retrieval(result: RetrievalEval, as_json: bool, per_query: bool) -> None:
    """The scores: one JSON object, or a line on the run and one per metric."""
    if as_json:
        typer.echo(json.dumps(result.to_dict(per_query=per_query)))
        return
    typer.echo(
        f"{result.retriever} ({result.unit}s, depth {result.depth}) on {result.queries} queries, "
        f"search {result.search_seconds:.2f} s"
    )
    width = max(len(m) for m in result.metrics)
    for name, value in result.metrics.items():
        typer.echo(f"{name:<{width}}  {value:.4f}")


@eval_app.command("run")
def run(
    experiment: Annotated[Path, typer.Argument(help="Experiment YAML file.")],
    out: Annotated[
        Path | None,
        typer.Option("--out", help="Results directory (default: results/<experiment name>)."),
    ] = None,
    repeats: Annotated[
        int | None,
        typer.Option("--repeats", min=1, help="Override repeats (default: 3 with an LLM, else 1)."),
    ] = None,
    report: Annotated[
        bool, typer.Option("--report/--no-report", help="Write the report when done.")
    ] = True,
    ray: RayOpt = None,
    ray_workers: RayWorkersOpt = None,
    ray_cpus: RayCpusOpt = 1,
    shard_size: ShardOpt = 16,
    pipeline: Annotated[
        list[str] | None,
        typer.Option(
            "--pipeline",
            help="Run only this pipeline of the file (repeatable); the others keep their "
            "results in --out and in the report, unchecked.",
        ),
    ] = None,
) -> None:
    """Run (or resume) an experiment: every pipeline x repeat x question, saved under --out.
    A pipeline added to the file later runs alone; the others resume from their results."""
    from sciera.eval.experiment import load_experiment
    from sciera.eval.runner import run_experiment

    exp = load_experiment(experiment).only(pipeline or [])
    out_dir = out or Path("results") / exp.name
    with (
        ray_executor(ray, ray_workers, shard_size, ray_cpus) as executor,
        step_progress(transient=False) as update,
    ):
        summary = run_experiment(exp, out_dir, repeats=repeats, progress=update, executor=executor)
    ran = sum(summary.ran.values())
    skipped = sum(summary.skipped.values())
    typer.echo(f"{exp.name}: ran {ran} question runs, resumed past {skipped}; results in {out_dir}")
    if report:
        from sciera.eval.report import write_report

        paths = write_report(out_dir)
        typer.echo(paths["md"].read_text(encoding="utf-8"))
        typer.echo(f"report: {paths['md'].parent}", err=True)


@eval_app.command("report")
def report_cmd(
    results: Annotated[Path, typer.Argument(help="Results directory of `sciera eval run`.")],
    plots: Annotated[bool, typer.Option("--plots/--no-plots", help="Write PNG plots.")] = True,
    baseline: Annotated[
        str | None,
        typer.Option(
            "--baseline", help="Pipeline the others are tested against (default: the first)."
        ),
    ] = None,
) -> None:
    """Write RESULTS/report/table.{md,csv,json} (mean ± std, best in bold), paired
    p-values against a baseline (significance.json) and PNG plots."""
    from sciera.eval.report import write_report

    paths = write_report(results, plots=plots, baseline=baseline)
    typer.echo(paths["md"].read_text(encoding="utf-8"))
    for name, path in paths.items():
        typer.echo(f"{name}: {path}", err=True)


@eval_app.command("leaderboard")
def leaderboard_cmd(
    results: Annotated[
        list[Path], typer.Argument(help="Results directories of `sciera eval run`.")
    ],
    out: Annotated[Path, typer.Option("--out", help="Folder for battles and tables.")],
    max_words: Annotated[
        int, typer.Option("--max-words", help="Answers cut to this many words (0: no cut).")
    ] = 250,
    bootstrap: Annotated[int, typer.Option("--bootstrap", min=0)] = 1000,
    seed: Annotated[int, typer.Option("--seed")] = 0,
    limit_minutes: Annotated[
        float | None, typer.Option("--limit-minutes", help="Stop judging after this long.")
    ] = None,
    judge_model: Annotated[
        str | None, typer.Option("--judge-model", help="LLM for the judge (default: llm.model).")
    ] = None,
    sanity: Annotated[
        Path | None,
        typer.Option("--sanity", help="sanity.json of `sciera eval judge-sanity`, shown beside."),
    ] = None,
    plots: Annotated[bool, typer.Option("--plots/--no-plots", help="Write a PNG.")] = True,
    preset: Annotated[str | None, typer.Option(help="Settings preset (fast, quality).")] = None,
) -> None:
    """Battles between every pair of answering pipelines on shared questions (pairwise
    judge, both orders), Bradley–Terry ratings with bootstrap intervals: OUT/leaderboard.*"""
    from sciera.eval.judges.pairwise import PairwiseJudge
    from sciera.eval.leaderboard import build_leaderboard, load_systems
    from sciera.llm.registry import make_llm
    from sciera.settings import load_settings

    load_systems(results)  # bad directories fail here, before the judge model loads
    overrides = {"llm": {"model": judge_model}} if judge_model else {}
    judge = PairwiseJudge(make_llm(load_settings(preset, **overrides)), max_words=max_words or None)
    with step_progress() as update:
        board = build_leaderboard(
            results,
            judge,
            out,
            bootstrap=bootstrap,
            seed=seed,
            limit_minutes=limit_minutes,
            progress=partial(update, "battles"),
            plots=plots,
            sanity=sanity,
        )
    from sciera.eval.leaderboard import markdown

    typer.echo(markdown(board))
    if not board.complete:
        typer.echo(f"partial: {board.judged} of {board.matches} battles; rerun to go on", err=True)
