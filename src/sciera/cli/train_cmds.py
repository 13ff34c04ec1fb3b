"""``sciera train ...``: fine-tune relevance models offline."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Annotated

import typer

from sciera.cli import app

train_app = typer.Typer(help="Fine-tune relevance models on your judgments (offline, CPU).")
app.add_typer(train_app, name="train")


def _quiet_transformers() -> None:
    """The command's own progress lines say what happens; transformers' per-save progress
    bars and load reports (a new head is expected here) would bury them."""
    from transformers.utils import logging as hf_logging

    hf_logging.set_verbosity_error()
    hf_logging.disable_progress_bar()


@train_app.command("cross-encoder")
def cross_encoder(
    corpus: Annotated[Path, typer.Option("--corpus", help="Corpus directory (ingested, indexed).")],
    queries: Annotated[
        Path, typer.Option("--queries", help="BEIR queries.jsonl, or a BEIR folder holding it.")
    ],
    qrels: Annotated[
        Path, typer.Option("--qrels", help="Training judgments (BEIR .tsv or TREC qrels).")
    ],
    out: Annotated[
        str, typer.Option("--out", help="Model name (SCIERA_HOME/models/NAME) or a path.")
    ],
    base: Annotated[
        str, typer.Option(help="Start from: 'minilm' (offline all-MiniLM-L6-v2) or a path/name.")
    ] = "minilm",
    loss: Annotated[str, typer.Option(help="listwise (softmax CE over groups) or bce.")] = (
        "listwise"
    ),
    epochs: Annotated[int, typer.Option(min=1)] = 4,
    negatives: Annotated[int, typer.Option(min=1, help="Hard negatives per group.")] = 7,
    groups_per_batch: Annotated[int, typer.Option(min=1)] = 4,
    lr: Annotated[float, typer.Option(help="Learning rate of the pretrained body.")] = 5e-5,
    head_lr: Annotated[float, typer.Option(help="Learning rate of the new head.")] = 1e-3,
    max_length: Annotated[int, typer.Option(min=16, help="Tokens per (query, passage).")] = 320,
    depth: Annotated[int, typer.Option(min=2, help="First-stage documents mined.")] = 30,
    retriever: Annotated[str, typer.Option(help="First stage that mines negatives.")] = "hybrid",
    dev_fraction: Annotated[float, typer.Option(help="Share of queries held out as dev.")] = 0.12,
    exclude_qrels: Annotated[
        list[Path] | None,
        typer.Option(
            "--exclude-qrels",
            help="Evaluation judgments whose queries are refused "
            "(a BEIR qrels/test.tsv beside --qrels is excluded without asking).",
        ),
    ] = None,
    exclude_ssli: Annotated[
        list[Path] | None,
        typer.Option(
            "--exclude-ssli",
            help="SSLI evaluation set whose gold abstracts never "
            "enter training (build folder, instances.jsonl or packed .jsonl.gz).",
        ),
    ] = None,
    seed: Annotated[int, typer.Option()] = 0,
    time_budget: Annotated[
        float | None, typer.Option("--time-budget", help="Minutes of training at most.")
    ] = None,
    fp16: Annotated[bool, typer.Option(help="Save the weights in float16 (half the size).")] = True,
    overwrite: Annotated[bool, typer.Option(help="Replace an existing model folder.")] = False,
    max_queries: Annotated[
        int | None, typer.Option(min=1, help="Train on the first N training queries only.")
    ] = None,
    preset: Annotated[str | None, typer.Option(help="Settings preset (fast, quality).")] = None,
) -> None:
    """Fine-tune a cross-encoder on QRELS with first-stage hard negatives; resumable
    (rerun the same command), the best dev epoch kept, calibrated on dev, with a model card."""
    from sciera.progress import step_progress
    from sciera.settings import load_settings
    from sciera.train.ce_fit import TrainConfig
    from sciera.train.cross_encoder_run import CrossEncoderJob, train_cross_encoder

    try:
        config = TrainConfig(
            base=base,
            loss=loss,
            epochs=epochs,
            negatives=negatives,
            groups_per_batch=groups_per_batch,
            lr=lr,
            head_lr=head_lr,
            max_length=max_length,
            seed=seed,
            time_budget_minutes=time_budget,
        )
    except ValueError as exc:
        raise typer.BadParameter(str(exc)) from None
    job = CrossEncoderJob(
        corpus,
        queries,
        qrels,
        out,
        config=config,
        retriever=retriever,
        depth=depth,
        dev_fraction=dev_fraction,
        exclude_qrels=exclude_qrels or (),
        exclude_ssli=exclude_ssli or (),
        fp16=fp16,
        overwrite=overwrite,
        max_queries=max_queries,
    )
    _quiet_transformers()
    with step_progress(transient=False) as update:
        result = train_cross_encoder(job, load_settings(preset), update)
    card = result.card
    modes = card["dev"]["modes"]
    typer.echo(
        f"model: {result.model_dir} (best epoch {card['best_epoch']}, "
        f"{card['train_seconds'] / 60:.1f} min)"
    )
    for mode, m in modes.items():
        typer.echo(f"dev {mode:<12} nDCG@10 {m['ndcg@10']:.4f}  hit@1 {m['hit@1']:.4f}")
    typer.echo(f"default scoring: {card['score_mode']}")
    typer.echo(json.dumps({"model_dir": str(result.model_dir)}))
