"""``sciera eval rubrics build`` and ``sciera eval judge-sanity``: the long-form
evaluation's inputs (ResearchQA rubrics) and its check of the judges."""

from __future__ import annotations

import json
from functools import partial
from pathlib import Path
from typing import Annotated

import typer

from sciera.cli.eval_cmds import eval_app
from sciera.progress import step_progress

rubrics_app = typer.Typer(help="Rubrics for judging long answers (ResearchQA).")
eval_app.add_typer(rubrics_app, name="rubrics")

DatasetOpt = Annotated[Path, typer.Option("--dataset", help="Dataset file or folder.")]
TypeOpt = Annotated[str, typer.Option("--type", help="Dataset type: pubmedqa, ssli or beir.")]
LimitOpt = Annotated[int | None, typer.Option("--limit", help="A seeded sample of N questions.")]


def _dataset(kind: str, path: Path, split: str | None, limit: int | None, seed: int):
    from sciera.datasets.loaders import load_dataset

    return load_dataset(kind, path, split=split, limit=limit, seed=seed)


@rubrics_app.command("build")
def rubrics_build(
    dataset: DatasetOpt,
    out: Annotated[Path, typer.Option("--out", help="Rubrics JSONL (appended; resumable).")],
    kind: TypeOpt = "pubmedqa",
    split: Annotated[str | None, typer.Option("--split")] = None,
    limit: LimitOpt = None,
    seed: Annotated[int, typer.Option("--seed")] = 0,
    corpus: Annotated[
        Path | None, typer.Option("--corpus", help="BEIR: the corpus holding judged documents.")
    ] = None,
    per_source: Annotated[int, typer.Option("--per-source", min=1)] = 6,
    keep: Annotated[int, typer.Option("--keep", min=1)] = 8,
    dedupe: Annotated[
        float, typer.Option("--dedupe", help="Cosine that marks a duplicate.")
    ] = 0.85,
    limit_minutes: Annotated[float | None, typer.Option("--limit-minutes")] = None,
    preset: Annotated[str | None, typer.Option(help="Settings preset (fast, quality).")] = None,
) -> None:
    """Rubric items per question: grounded in the dataset's answer text, plus parametric
    ones; vacuous and near-duplicate items removed, the first KEEP kept, each typed."""
    from sciera.eval.rubrics import RubricSpec, build_rubrics, embedder_embed, stats_line
    from sciera.llm.registry import make_llm
    from sciera.settings import load_settings

    data = _dataset(kind, dataset, split, limit, seed)
    settings = load_settings(preset)
    store = None
    if corpus is not None:
        from sciera.corpus.store import PassageStore

        store = PassageStore.open(corpus)
    spec = RubricSpec(per_source=per_source, keep=keep, dedupe=dedupe)
    with step_progress() as update:
        stats = build_rubrics(
            data,
            make_llm(settings),
            embedder_embed(settings),
            out,
            spec,
            store=store,
            limit_minutes=limit_minutes,
            progress=partial(update, "rubrics"),
        )
    typer.echo(stats_line(stats))
    out.with_suffix(".stats.json").write_text(json.dumps(stats, indent=1) + "\n")


@eval_app.command("judge-sanity")
def judge_sanity(
    dataset: DatasetOpt,
    out: Annotated[Path, typer.Option("--out", help="Folder for cases, judgments, summary.")],
    kind: TypeOpt = "pubmedqa",
    limit: LimitOpt = None,
    seed: Annotated[int, typer.Option("--seed")] = 0,
    rubrics: Annotated[
        Path | None, typer.Option("--rubrics", help="Rubrics JSONL: also check coverage.")
    ] = None,
    pairwise: Annotated[
        bool, typer.Option("--pairwise/--no-pairwise", help="Check the pairwise judge.")
    ] = True,
    max_words: Annotated[int, typer.Option("--max-words", help="Answer cut (0: none).")] = 250,
    judge_model: Annotated[
        str | None, typer.Option("--judge-model", help="LLM for the judges (default: llm.model).")
    ] = None,
    limit_minutes: Annotated[float | None, typer.Option("--limit-minutes")] = None,
    preset: Annotated[str | None, typer.Option(help="Settings preset (fast, quality).")] = None,
) -> None:
    """Reference answers against controlled corruptions (a finding dropped, negated, or
    replaced by an unrelated cited claim; the answer padded): each judge's accuracy."""
    from sciera.eval.judges.pairwise import PairwiseJudge
    from sciera.eval.judges.rubric import RubricCoverageJudge
    from sciera.eval.sanity import markdown, run_sanity
    from sciera.llm.registry import make_llm
    from sciera.settings import load_settings

    data = _dataset(kind, dataset, None, limit, seed)
    overrides = {"llm": {"model": judge_model}} if judge_model else {}
    llm = make_llm(load_settings(preset, **overrides))
    words = max_words or None
    with step_progress() as update:
        summary = run_sanity(
            data,
            out,
            pairwise=PairwiseJudge(llm, max_words=words) if pairwise else None,
            coverage=RubricCoverageJudge(llm, rubrics=rubrics, max_words=words)
            if rubrics
            else None,
            limit_minutes=limit_minutes,
            progress=partial(update, "cases"),
        )
    typer.echo(markdown(summary))
