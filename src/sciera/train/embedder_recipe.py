"""``sciera train embedder RECIPE.yaml``: the recipe of a dense retriever's embedder.

    out: scifact-minilm-embed          # the model the recipe makes
    data:                              # paths relative to this file
      corpus: ../corpora/scifact
      queries: ../../shared/data/scifact
      qrels: ../../shared/data/scifact/qrels/train.tsv
    train: {epochs: 4, time_budget_minutes: 32}

One stage (train), logged like the cross-encoder's (``SCIERA_HOME/models/<out>.recipe.json``):
a rerun of a finished recipe does nothing; an interrupted one resumes from its last epoch.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

from pydantic import Field

from sciera.executor import Executor
from sciera.settings import Settings
from sciera.train.cross_encoder_run import TrainResult
from sciera.train.embedder_fit import EmbedderConfig
from sciera.train.recipe import Recipe, Stage, StageLog, recorded, run_stages, stage_log
from sciera.train.recipe_data import TrainingData

Progress = Callable[[str, int, int], None]


class EmbedderTraining(Recipe):
    """The training run's settings (:class:`~sciera.train.embedder_fit.EmbedderConfig`,
    and fp16)."""

    base: str = Field(
        "minilm", description="Start from: 'minilm', 'e5', 'e5-enpt' or a model folder or name."
    )
    epochs: int = Field(3, ge=1)
    negatives: int = Field(1, ge=0, description="Hard negatives per example (0: in-batch only).")
    batch_size: int = Field(16, ge=2, description="Examples per batch.")
    lr: float = Field(2e-5, gt=0, description="Learning rate.")
    warmup: float = Field(0.1, ge=0, lt=1)
    weight_decay: float = Field(0.01, ge=0)
    scale: float = Field(20.0, gt=0, description="Cosine scale of the softmax.")
    max_length: int = Field(256, ge=16, description="Tokens per text.")
    seed: int = Field(0, description="Seed of the dev split and of training.")
    time_budget_minutes: float | None = Field(None, gt=0, description="Training minutes at most.")
    fp16: bool = Field(True, description="Save the weights in float16 (half the size).")

    def config(self) -> EmbedderConfig:
        return EmbedderConfig(**{k: v for k, v in dict(self).items() if k != "fp16"})


class EmbedderRecipe(Recipe):
    """Everything ``sciera train embedder`` takes."""

    out: str = Field(description="The model made: a name (SCIERA_HOME/models/NAME) or a path.")
    data: TrainingData
    train: EmbedderTraining = Field(default_factory=EmbedderTraining)


def train_recipe(
    recipe: EmbedderRecipe,
    record: dict[str, Any],
    settings: Settings,
    progress: Progress | None = None,
    executor: Executor | None = None,
    overwrite: bool = False,
    say: Callable[[str], None] = print,
) -> list[TrainResult]:
    """Train the embedder unless the logged run with these settings is done; what the
    stage returned (nothing when skipped). ``record``: what the card keeps of the recipe."""
    from sciera.train.embedder_run import EmbedderJob, train_embedder
    from sciera.train.prepare import model_dir_for

    train, data = recipe.train, recipe.data
    job = EmbedderJob(
        data.spec(train.seed, executor), recipe.out, train.config(), train.fp16, overwrite
    )

    what = {"out": recipe.out, "train": train.model_dump(mode="json"), "data": data.spec_fields()}
    stage = Stage("train", what, lambda: train_embedder(job, settings, progress))
    log = StageLog(stage_log(model_dir_for(recipe.out, settings)))
    return run_stages([recorded(stage, record)], log, say)
