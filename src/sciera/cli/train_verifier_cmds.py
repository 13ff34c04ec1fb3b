"""``sciera train verifier RECIPE.yaml``: train the claim verifier a recipe file describes
(:mod:`sciera.train.verifier_recipe`; the shipped model's is ``recipes/scifact-verifier.yaml``)."""

from __future__ import annotations

import json
import shlex
from pathlib import Path
from typing import Annotated, Any

import typer

from sciera.cli.train_cmds import _quiet_transformers, train_app


@train_app.command("verifier")
def verifier(
    recipe: Annotated[
        Path, typer.Argument(help="Recipe YAML file (e.g. recipes/scifact-verifier.yaml).")
    ],
    set_: Annotated[
        list[str] | None,
        typer.Option(
            "--set",
            help="Change one recipe field, FIELD.PATH=VALUE (read as YAML; repeatable), e.g. "
            "--set model.epochs=1.",
        ),
    ] = None,
    overwrite: Annotated[
        bool,
        typer.Option(help="Replace a model folder trained with other model or data settings."),
    ] = False,
) -> None:
    """Fine-tune the claim verifier (rationale selector + verdict model, one encoder) a
    recipe describes, in stages (fit, calibrate, combine, citer): rerunning the command
    skips the stages done with the same settings and reruns a changed one with those after
    it."""
    from sciera.progress import step_progress
    from sciera.settings import load_settings
    from sciera.train.recipe import recipe_record
    from sciera.train.verifier_recipe import check_paths, load_verifier_recipe
    from sciera.train.verifier_run import train_verifier

    sets = list(set_ or [])
    loaded = load_verifier_recipe(recipe, sets)
    check_paths(loaded, str(recipe))
    job = loaded.job(overwrite=overwrite)
    command = shlex.join(
        ["sciera", "train", "verifier", str(recipe), *[a for s in sets for a in ("--set", s)]]
    )
    _quiet_transformers()
    with step_progress(transient=False) as update:
        result = train_verifier(
            job,
            load_settings(loaded.preset),
            update,
            command=command,
            recipe=recipe_record(recipe, sets),
        )
    for line in verifier_summary(result.card, result.model_dir):
        typer.echo(line)
    typer.echo(json.dumps({"model_dir": str(result.model_dir)}))


def verifier_summary(card: dict[str, Any], model_dir: Path) -> list[str]:
    """What ``sciera train verifier`` prints when it is done: the dev scores, the policy,
    the combiners' cross-validated accuracies and the combined verdict's gate."""
    lines = [
        f"model: {model_dir} (best epoch {card['best_epoch']}, "
        f"{card['train_seconds'] / 60:.1f} min)"
    ]
    for setting in ("oracle", "open"):
        m = card["dev"].get(setting)
        if m:
            lines.append(
                f"dev {setting:<6} abstract label-only F1 {m['abstract_label_only_f1']:.4f}  "
                f"sentence selection+label F1 {m['sentence_label_f1']:.4f}"
            )
    lines.append(f"policy: {json.dumps(card['policy'])}")
    citer = (card["dev"].get("citer_calibration") or {}) if card.get("citer") else {}
    if citer:
        lines.append(
            f"citer (rank {card['citer']['rank']}): dev average precision over the candidates' "
            f"sentences {citer['average_precision_citer']:.4f} "
            f"(the rationale head: {citer['average_precision_head']:.4f})"
        )
    return lines + _combiner_lines(card.get("combiner") or {})


def _combiner_lines(combiner: dict[str, Any]) -> list[str]:
    lines = []
    for kind in combiner.get("files") or {}:
        cv = combiner[kind]["cross_validated"]  # per verdict model, and the fold count
        lines.append(
            f"LLM combiner ({kind}s, cross-validated on training rows): accuracy "
            + ", ".join(f"{k} {v['accuracy']:.3f}" for k, v in cv.items() if isinstance(v, dict))
        )
    if combiner.get("policy_search"):
        cv = combiner["policy_search"]["cross_validated"]
        lines.append(
            f"combined verdict's gate: {json.dumps(combiner['policy'])}; dev open abstract "
            f"label-only F1 {cv['abstract_label_only_f1']:.4f}, sentence selection+label F1 "
            f"{cv['sentence_label_f1']:.4f} ({cv['folds']}-fold cross-validated)"
        )
    return lines
