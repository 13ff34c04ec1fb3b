"""``sciera train ...``: fine-tune relevance models offline."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Annotated

import typer

from sciera.cli.base import app
from sciera.cli.ray_opts import RayCpusOpt, RayOpt, RayWorkersOpt, ShardOpt, ray_executor

train_app = typer.Typer(help="Fine-tune relevance models on your judgments (offline, CPU).")
app.add_typer(train_app, name="train")


def _quiet_transformers() -> None:
    """The command's own progress lines say what happens; transformers' per-save progress
    bars and load reports (a new head is expected here) would bury them."""
    from transformers.utils import logging as hf_logging

    hf_logging.set_verbosity_error()
    hf_logging.disable_progress_bar()


OutOpt = Annotated[
    str, typer.Option("--out", help="Model name (SCIERA_HOME/models/NAME) or a path.")
]
PresetOpt = Annotated[str | None, typer.Option(help="Settings preset (fast, quality).")]


def _styles(text: str) -> tuple[str, ...]:
    return tuple(s.strip() for s in text.split(",") if s.strip())


RecipeArg = Annotated[Path, typer.Argument(help="The recipe: a YAML file (see docs/train.md).")]
SetOpt = Annotated[
    list[str] | None,
    typer.Option(
        "--set",
        help="Override a recipe field: key.path=value, the value read as YAML (repeatable), "
        "e.g. --set train.epochs=2 --set data.max_queries=40.",
    ),
]
RecipeOverwriteOpt = Annotated[
    bool, typer.Option(help="Replace existing model folders the stages to run write.")
]


def _run_recipe(kind: str, path: Path, sets: list[str] | None, how: tuple, preset) -> list:
    """Load the recipe of ``kind`` (cross-encoder, embedder) and run its stages not done
    before (``how``: the Ray options and --overwrite); what each stage run returned."""
    from importlib import import_module

    from sciera.progress import step_progress
    from sciera.settings import load_settings
    from sciera.train.recipe import load_recipe, recipe_record

    module = import_module(f"sciera.train.{kind.replace('-', '_')}_recipe")
    model = module.CrossEncoderRecipe if kind == "cross-encoder" else module.EmbedderRecipe
    recipe = load_recipe(model, path, sets or ())
    *ray, overwrite = how
    _quiet_transformers()
    with ray_executor(*ray) as executor, step_progress(transient=False) as update:
        return module.train_recipe(
            recipe,
            recipe_record(path, sets or ()),
            load_settings(preset),
            update,
            executor,
            overwrite,
            say=lambda line: typer.echo(line, err=True),
        )


@train_app.command("cross-encoder")
def cross_encoder(
    recipe: RecipeArg,
    set_: SetOpt = None,
    overwrite: RecipeOverwriteOpt = False,
    ray: RayOpt = None,
    ray_workers: RayWorkersOpt = None,
    ray_cpus: RayCpusOpt = 1,
    shard_size: ShardOpt = 16,
    preset: PresetOpt = None,
) -> None:
    """Make a cross-encoder by its recipe: fine-tune it on judgments with first-stage hard
    negatives (the best dev epoch kept, calibrated on dev, with a model card), or train
    ingredients and soup them, then refit its calibrators as the recipe says. Resumable:
    rerun the same command (finished stages are skipped, training resumes from its last
    epoch)."""
    how = (ray, ray_workers, shard_size, ray_cpus, overwrite)
    for result in _run_recipe("cross-encoder", recipe, set_, how, preset):
        _report(result)
        typer.echo(f"default scoring: {result.card['score_mode']}")
        typer.echo(json.dumps({"model_dir": str(result.model_dir)}))


def _modes(label: str, modes: dict) -> None:
    for mode, m in modes.items():
        ece = f"  ECE {m['ece']:.4f}" if "ece" in m else ""
        first = f"  distractor first {m['distractor_first']:.4f}" if "distractor_first" in m else ""
        typer.echo(
            f"{label} {mode:<12} nDCG@10 {m['ndcg@10']:.4f}  hit@1 {m['hit@1']:.4f}{ece}{first}"
        )


def _report(result) -> None:
    card = result.card
    typer.echo(
        f"model: {result.model_dir} (best epoch {card['best_epoch']}, "
        f"{card['train_seconds'] / 60:.1f} min)"
    )
    _modes("dev", card["dev"]["modes"])
    questions = card["dev"].get("calibration_questions", {}).get("modes")
    if questions:
        _modes("questions", questions)


@train_app.command("embedder")
def embedder(
    recipe: RecipeArg,
    set_: SetOpt = None,
    overwrite: RecipeOverwriteOpt = False,
    ray: RayOpt = None,
    ray_workers: RayWorkersOpt = None,
    ray_cpus: RayCpusOpt = 1,
    shard_size: ShardOpt = 16,
    preset: PresetOpt = None,
) -> None:
    """Make the dense retriever's embedder by its recipe: fine-tune it on judgments
    (in-batch + first-stage hard negatives); resumable, the best dev epoch kept, with a model
    card. Re-embed a corpus with it: sciera index --corpus DIR --dense-only --embedder
    sentence-transformers --model NAME."""
    how = (ray, ray_workers, shard_size, ray_cpus, overwrite)
    for result in _run_recipe("embedder", recipe, set_, how, preset):
        _report(result)
        typer.echo(json.dumps({"model_dir": str(result.model_dir)}))


@train_app.command("recalibrate")
def recalibrate(
    model: Annotated[
        str, typer.Argument(help="A trained cross-encoder: shipped or trained name, or folder.")
    ],
    embedder: Annotated[
        str | None,
        typer.Option(
            help="First-stage embedder whose candidates to calibrate on (default: "
            "settings); the corpus must be indexed with it."
        ),
    ] = None,
    precision: Annotated[
        str,
        typer.Option(
            help="Calibrate the logits of fp32 (torch) or int8 (ONNX Runtime) inference; "
            "int8 calibrators are kept beside the fp32 ones."
        ),
    ] = "fp32",
    calibration_questions: Annotated[
        int | None,
        typer.Option(
            min=0,
            help="Calibration questions to add (see train cross-encoder; default: as many as "
            "the model card records).",
        ),
    ] = None,
    calibration_styles: Annotated[
        str | None,
        typer.Option(
            help="Their styles, comma-separated (see train cross-encoder; default: the "
            "model card's)."
        ),
    ] = None,
    calibration_ssli: Annotated[
        list[str] | None,
        typer.Option(
            help="A calibration-side SSLI set (instances.jsonl or its build folder; "
            "repeatable): its distractors go into a copy of the corpus and its questions "
            "into the fused weights' fit (default: the sets the model card records).",
        ),
    ] = None,
    calibration_ssli_weight: Annotated[
        int | None,
        typer.Option(
            min=0,
            help="How many times each SSLI question's rows count in that fit (default: "
            "the card's, else 10; 0 drops the SSLI questions).",
        ),
    ] = None,
    preset: PresetOpt = None,
) -> None:
    """Refit a trained cross-encoder's calibrators on its own dev split (rebuilt from its
    card, checked against it), e.g. for the first stage you run; the weights are unchanged."""
    from sciera.progress import step_progress
    from sciera.settings import load_settings
    from sciera.train.recalibrate import RecalibrationJob
    from sciera.train.recalibrate import recalibrate as run

    overrides = {"embed": {"backend": embedder}} if embedder else {}
    job = RecalibrationJob(
        precision=precision,
        calibration_questions=calibration_questions,
        calibration_styles=_styles(calibration_styles) if calibration_styles else None,
        calibration_ssli=calibration_ssli,
        calibration_ssli_weight=calibration_ssli_weight,
    )
    _quiet_transformers()
    with step_progress(transient=False) as update:
        result = run(model, load_settings(preset, **overrides), update, job=job)
    key = "modes" if precision == "fp32" else f"modes_{precision}"
    _modes("dev", result.card["dev"][key])
    questions = result.card["dev"].get("calibration_questions", {}).get(key)
    if questions:
        _modes("questions", questions)
    ssli = result.card["dev"].get("calibration_ssli", {}).get(key)
    if ssli:
        _modes("SSLI questions", ssli)
    typer.echo(f"default scoring: {result.card['score_mode']}")
    typer.echo(json.dumps({"model_dir": str(result.model_dir)}))


@train_app.command("soup")
def soup(
    models: Annotated[
        list[str],
        typer.Argument(
            help="Trained cross-encoders (names or folders) fine-tuned from the same start, "
            "with the same dev split."
        ),
    ],
    out: OutOpt,
    method: Annotated[
        str,
        typer.Option(
            help="greedy: add models best first while the dev score does not fall; "
            "uniform: average all."
        ),
    ] = "greedy",
    calibration_questions: Annotated[
        int | None,
        typer.Option(
            min=0,
            help="Calibration questions (see train cross-encoder; default: as many as the "
            "first model's card records).",
        ),
    ] = None,
    overwrite: Annotated[
        bool, typer.Option(help="Replace an existing model of that name.")
    ] = False,
    preset: PresetOpt = None,
) -> None:
    """Average the weights of cross-encoders into one (a model soup), chosen on the dev
    split; the result is a model folder with calibrators and a card, like a trained one."""
    from sciera.progress import step_progress
    from sciera.settings import load_settings
    from sciera.train.soup import SoupJob
    from sciera.train.soup import soup as run

    _quiet_transformers()
    job = SoupJob(tuple(models), out, method, calibration_questions, overwrite)
    with step_progress(transient=False) as update:
        result = run(job, load_settings(preset), update)
    for trial in result.card["soup"]["trials"]:
        _modes(" + ".join(trial["members"]), {"fused": trial["modes"]["fused"]})
    typer.echo(f"chosen: {' + '.join(result.card['soup']['chosen'])}")
    _modes("dev", result.card["dev"]["modes"])
    typer.echo(json.dumps({"model_dir": str(result.model_dir)}))
