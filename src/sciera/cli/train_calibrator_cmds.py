"""``sciera train deepera-calibrator``: fit the calibrator DeepEra's scores go through."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Annotated

import typer

from sciera.cli.train_cmds import train_app


def _bundled() -> Path | None:
    """The calibrators shipped with sciera when it runs from a checkout (src/sciera/...
    under a folder with pyproject.toml), so a refit ships with the package; else None."""
    from sciera.rerank.calibrate import BUNDLED

    root = BUNDLED.resolve().parents[3]
    return BUNDLED if (root / "pyproject.toml").is_file() else None


def _command(claims: int, depth: int, seed: int, intent: bool, analyze_only: bool) -> str:
    """The command the report names (the options that pick the claims and the mode)."""
    words = ["sciera train deepera-calibrator"]
    words += ["--analyze-only"] if analyze_only else []
    words += [f"--claims {claims} --depth {depth} --seed {seed}"]
    words += [] if intent else ["--no-intent"]
    return " ".join(words)


@train_app.command("deepera-calibrator")
def deepera_calibrator(
    claims: Annotated[int, typer.Option(min=2, help="SciFact train claims sampled.")] = 18,
    depth: Annotated[int, typer.Option(min=1, help="First-stage abstracts per claim.")] = 10,
    seed: Annotated[int, typer.Option(help="Seed of the claims' sample.")] = 13,
    max_words: Annotated[int, typer.Option(help="Words of a passage the LLM reads.")] = 200,
    l2: Annotated[float, typer.Option(help="L2 penalty of the logistic regression.")] = 1.0,
    intent: Annotated[
        bool,
        typer.Option(
            "--intent/--no-intent",
            help="Assess with the structured intent; --no-intent is ablation v1 (its own "
            "rows, report and calibrator).",
        ),
    ] = True,
    folds: Annotated[int, typer.Option(min=2, help="Folds (by claim) of the reliability.")] = 5,
    analyze_only: Annotated[
        bool,
        typer.Option(help="Fit and report on the claims already scored (no LLM calls)."),
    ] = False,
    scifact: Annotated[
        Path, typer.Option(help="BEIR SciFact folder (corpus, queries, qrels/train.tsv).")
    ] = Path("../shared/data/scifact"),
    results: Annotated[
        Path,
        typer.Option(help="Folder of the scored rows (resumable), report, plot and calibrators."),
    ] = Path("benchmarks/results"),
) -> None:
    """Fit DeepEra's calibrator on SciFact train claims scored by the default LLM (rows
    appended per claim, so a stopped run goes on) and install the best one under
    SCIERA_HOME/calibrators (and, in a checkout, into the calibrators sciera ships)."""
    from sciera.llm.registry import make_llm
    from sciera.settings import load_settings
    from sciera.train.deepera_calibrator import CalibratorRun, fit_deepera_calibrator, summary

    settings = load_settings()
    run = CalibratorRun(
        scifact=scifact,
        results=results,
        claims=claims,
        depth=depth,
        seed=seed,
        max_words=max_words,
        l2=l2,
        use_intent=intent,
        folds=folds,
        analyze_only=analyze_only,
        command=_command(claims, depth, seed, intent, analyze_only),
    )
    report = fit_deepera_calibrator(
        run,
        home=settings.home,
        bundled=_bundled(),
        make_llm=lambda: make_llm(settings),
        log=lambda line: typer.echo(line, err=True),
    )
    head, short = summary(report)
    typer.echo(json.dumps(head, indent=1))
    typer.echo(json.dumps(short, indent=1))
