"""``sciera train cross-encoder RECIPE.yaml``: the recipe of a cross-encoder and its stages.

    out: scifact-minilm                # the model the recipe makes
    data:                              # paths relative to this file
      corpus: ../corpora/scifact
      queries: ../../shared/data/scifact
      qrels: ../../shared/data/scifact/qrels/train.tsv
      calibration_questions: 150
    train: {epochs: 1, max_length: 256}
    ingredients:                       # optional: models trained, then souped into `out`
      - {name: ce-a, data: {ssli_negatives: [../corpora/ssli-train]}}
      - {name: ce-b, train: {seed: 1}}
    soup: {method: uniform}            # with two or more ingredients
    recalibrate:                       # optional: calibrators refitted, in this order
      - {precision: fp32, calibration_ssli: [../corpora/ssli-cal/instances.jsonl]}
      - {precision: int8}

Stages, in order: train ``out`` (or each ingredient, with its ``train``/``data`` fields
over the recipe's), soup the ingredients into ``out``, each recalibration. The stages done
are logged (``SCIERA_HOME/models/<out>.recipe.json``): a rerun skips them and runs a stage
whose settings changed again, with every stage after it; a training stage still resumes
from its last epoch. Each stage calls what ``sciera train soup`` / ``recalibrate`` call.
"""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path
from typing import Any, Literal

from pydantic import Field, ValidationError, field_validator, model_validator

from sciera.executor import Executor
from sciera.settings import Settings
from sciera.train.ce_fit import LOSSES, TrainConfig
from sciera.train.cross_encoder_run import TrainResult
from sciera.train.recipe import (
    Recipe,
    Stage,
    StageLog,
    merged,
    partial,
    recorded,
    run_stages,
    stage_log,
)
from sciera.train.recipe_data import CalibratedData, shown

Progress = Callable[[str, int, int], None]


class CrossEncoderTraining(Recipe):
    """One training run's settings (:class:`~sciera.train.ce_fit.TrainConfig`, and fp16)."""

    base: str = Field(
        "minilm",
        description="Start from: 'minilm', 'e5', 'e5-enpt' or a model folder or name.",
    )
    loss: str = Field("listwise", description="listwise (softmax CE over groups) or bce.")
    epochs: int = Field(4, ge=1)
    negatives: int = Field(7, ge=1, description="Hard negatives per group.")
    groups_per_batch: int = Field(4, ge=1)
    lr: float = Field(5e-5, gt=0, description="Learning rate of the pretrained body.")
    head_lr: float = Field(1e-3, gt=0, description="Learning rate of the new head.")
    warmup: float = Field(0.1, ge=0, lt=1)
    weight_decay: float = Field(0.01, ge=0)
    max_length: int = Field(320, ge=16, description="Tokens per (query, passage).")
    seed: int = Field(0, description="Seed of the dev split and of training.")
    time_budget_minutes: float | None = Field(None, gt=0, description="Training minutes at most.")
    fp16: bool = Field(True, description="Save the weights in float16 (half the size).")

    @field_validator("loss")
    @classmethod
    def _known_loss(cls, value: str) -> str:
        if value not in LOSSES:
            raise ValueError(f"must be one of {', '.join(LOSSES)}, got {value!r}")
        return value

    def config(self) -> TrainConfig:
        return TrainConfig(**{k: v for k, v in dict(self).items() if k != "fp16"})


TrainingOverrides = partial(CrossEncoderTraining)
DataOverrides = partial(CalibratedData)


class Ingredient(Recipe):
    """A model trained to go into the soup: its name and what differs from the recipe's."""

    name: str = Field(description="Model name (SCIERA_HOME/models/NAME) or folder.")
    train: TrainingOverrides = Field(default_factory=TrainingOverrides)  # type: ignore[valid-type]
    data: DataOverrides = Field(default_factory=DataOverrides)  # type: ignore[valid-type]


class SoupStage(Recipe):
    method: Literal["greedy", "uniform"] = Field(
        "greedy",
        description="greedy: add ingredients best first while the dev score does not fall; "
        "uniform: average all.",
    )
    calibration_questions: int | None = Field(
        None, ge=0, description="Default: as many as the first ingredient's card records."
    )


class Recalibration(Recipe):
    """A refit of the calibrators (``sciera train recalibrate``; None: as the card says)."""

    precision: Literal["fp32", "int8"] = "fp32"
    embedder: str | None = Field(None, description="First-stage embedder (default: settings).")
    calibration_questions: int | None = Field(None, ge=0)
    calibration_styles: tuple[str, ...] | None = None
    calibration_ssli: tuple[Path, ...] | None = None
    calibration_ssli_weight: int | None = Field(None, ge=0)


class CrossEncoderRecipe(Recipe):
    """Everything ``sciera train cross-encoder`` takes."""

    out: str = Field(description="The model made: a name (SCIERA_HOME/models/NAME) or a path.")
    data: CalibratedData
    train: CrossEncoderTraining = Field(default_factory=CrossEncoderTraining)
    ingredients: list[Ingredient] = Field(default_factory=list)
    soup: SoupStage | None = None
    recalibrate: list[Recalibration] = Field(default_factory=list)

    @model_validator(mode="after")
    def _stages_fit(self) -> CrossEncoderRecipe:
        if bool(self.ingredients) != (self.soup is not None):
            raise ValueError("soup: give it together with two or more ingredients")
        names = [i.name for i in self.ingredients]
        if len(names) == 1 or len(set(names)) < len(names) or self.out in names:
            raise ValueError("ingredients: two or more, each named apart from out")
        for i, _ in enumerate(self.ingredients):
            for part in ("train", "data"):
                try:
                    self.ingredient(i, part)
                except ValidationError as exc:
                    err = exc.errors()[0]
                    at = ".".join([f"ingredients[{i}]", part, *(str(x) for x in err["loc"])])
                    msg = str(err["msg"]).removeprefix("Value error, ")
                    raise ValueError(f"{at}: {msg}") from None
        return self

    def ingredient(self, index: int, part: str) -> Any:
        """An ingredient's ``train`` or ``data`` settings: its own fields over the recipe's."""
        return merged(getattr(self, part), getattr(self.ingredients[index], part))

    def runs(self) -> list[tuple[str, CrossEncoderTraining, CalibratedData]]:
        """(model, training, data) of each training stage, in order."""
        if not self.ingredients:
            return [(self.out, self.train, self.data)]
        return [
            (ing.name, self.ingredient(i, "train"), self.ingredient(i, "data"))
            for i, ing in enumerate(self.ingredients)
        ]


def train_recipe(
    recipe: CrossEncoderRecipe,
    record: dict[str, Any],
    settings: Settings,
    progress: Progress | None = None,
    executor: Executor | None = None,
    overwrite: bool = False,
    say: Callable[[str], None] = print,
) -> list[TrainResult]:
    """Run the stages of ``recipe`` not done before (``record``: what each model's card
    keeps of the recipe, :func:`~sciera.train.recipe.recipe_record`); what each stage run
    returned."""
    from sciera.train.prepare import model_dir_for

    log = StageLog(stage_log(model_dir_for(recipe.out, settings)))
    todo = [recorded(s, record) for s in stages(recipe, settings, progress, executor, overwrite)]
    return run_stages(todo, log, say)


def stages(
    recipe: CrossEncoderRecipe,
    settings: Settings,
    progress: Progress | None = None,
    executor: Executor | None = None,
    overwrite: bool = False,
    command: str | None = None,
) -> list[Stage]:
    """The stages of ``recipe`` in order (nothing run yet)."""
    from sciera.train.cross_encoder_run import CrossEncoderJob, train_cross_encoder
    from sciera.train.soup import SoupJob, soup

    out: list[Stage] = []
    for name, train, data in recipe.runs():
        job = CrossEncoderJob(
            data.spec(train.seed, executor), name, train.config(), train.fp16, overwrite
        )
        what = {"out": name, "train": train.model_dump(mode="json"), "data": data.spec_fields()}
        out.append(
            Stage(
                f"train {name}",
                what,
                lambda j=job: train_cross_encoder(j, settings, progress, command),
            )
        )
    if recipe.soup is not None:
        s = recipe.soup
        members = tuple(i.name for i in recipe.ingredients)
        job = SoupJob(members, recipe.out, s.method, s.calibration_questions, overwrite)
        what = {"out": recipe.out, "members": list(members), **s.model_dump(mode="json")}
        out.append(Stage("soup", what, lambda: soup(job, settings, progress, command)))
    for r in recipe.recalibrate:
        what = {"out": recipe.out, **r.model_dump(mode="json")}
        out.append(
            Stage(
                f"recalibrate {r.precision}",
                what,
                lambda r=r: _recalibrate(recipe.out, r, settings, progress, command),
            )
        )
    return out


def _recalibrate(
    model: str, r: Recalibration, settings: Settings, progress: Progress | None, command: str | None
) -> TrainResult:
    from sciera.train.recalibrate import RecalibrationJob, recalibrate

    if r.embedder:
        settings = settings.model_copy(
            update={"embed": settings.embed.model_copy(update={"backend": r.embedder})}
        )
    job = RecalibrationJob(
        precision=r.precision,
        calibration_questions=r.calibration_questions,
        calibration_styles=r.calibration_styles,
        calibration_ssli=tuple(shown(p) for p in r.calibration_ssli)
        if r.calibration_ssli
        else None,
        calibration_ssli_weight=r.calibration_ssli_weight,
    )
    return recalibrate(model, settings, progress, command, job)
