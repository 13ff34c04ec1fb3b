"""The ``data:`` part of the cross-encoder and embedder recipes: where the training data
comes from and how it is split (the fields of :class:`~sciera.train.prepare.DataSpec`),
and the ``--overwrite``-free way a recipe's stage says its output already exists."""

from __future__ import annotations

import os
from pathlib import Path
from typing import Any

from pydantic import Field, model_validator

from sciera.executor import Executor
from sciera.train.prepare import DataSpec
from sciera.train.recipe import Recipe


def shown(path: Path) -> str:
    """A recipe's (absolute) path as a card records it: relative to the working folder
    when it lies there or beside it (``corpora/scifact``, ``../shared/data/scifact``, as
    typed on the command line), else absolute."""
    rel = os.path.relpath(path)
    return str(path) if rel.startswith(f"..{os.sep}..") else rel


class TrainingData(Recipe):
    """Training judgments, the corpus the first stage mines negatives from, and the split
    discipline (``sciera train ...``'s data options)."""

    corpus: Path = Field(description="Corpus directory (ingested, indexed).")
    queries: Path = Field(description="BEIR queries.jsonl, or a BEIR folder holding it.")
    qrels: Path = Field(description="Training judgments (BEIR .tsv or TREC qrels).")
    retriever: str = Field("hybrid", description="First stage that mines negatives.")
    depth: int = Field(30, ge=2, description="First-stage documents mined.")
    dev_fraction: float = Field(0.12, gt=0, lt=1, description="Share of queries held out.")
    exclude_qrels: tuple[Path, ...] = Field(
        (),
        description="Evaluation judgments whose queries are refused (a BEIR qrels/test.tsv "
        "beside qrels is excluded without asking).",
    )
    exclude_ssli: tuple[Path, ...] = Field(
        (), description="SSLI evaluation sets whose gold abstracts never enter training."
    )
    max_queries: int | None = Field(None, ge=1, description="Train on the first N queries.")
    synthetic: int = Field(
        0, ge=0, description="Abstracts the local LLM writes one synthetic query for."
    )
    synthetic_style: str = Field("claim", description="claim, question or yesno.")
    synthetic_keep_top: int = Field(
        3,
        ge=1,
        description="Keep a synthetic query when the first stage ranks its source this high.",
    )
    ssli_negatives: tuple[Path, ...] = Field(
        (), description="Training-side SSLI sets: their distractors join groups as negatives."
    )
    spliced_negatives: int = Field(
        0, ge=0, description="Per training query, negatives cut from its gold passage (no LLM)."
    )

    @model_validator(mode="after")
    def _valid_spec(self) -> TrainingData:
        self.spec(seed=0)  # DataSpec's own checks (styles, counts), as one-line errors
        return self

    def spec_fields(self) -> dict[str, Any]:
        values: dict[str, Any] = {}
        for name in type(self).model_fields:
            value = getattr(self, name)
            if isinstance(value, Path):
                value = shown(value)
            elif isinstance(value, tuple):
                value = tuple(shown(v) if isinstance(v, Path) else v for v in value)
            values[name] = value
        return values

    def spec(self, seed: int, executor: Executor | None = None) -> DataSpec:
        """The :class:`DataSpec` of these fields (paths as the card records them)."""
        return DataSpec(**self.spec_fields(), seed=seed, executor=executor)


class CalibratedData(TrainingData):
    """A cross-encoder's data: also the LLM-written calibration questions (never trained on)."""

    calibration_questions: int = Field(
        0,
        ge=0,
        description="Held-out abstracts the local LLM writes a question for; the questions "
        "rescale the calibrators, never training (0: claims only).",
    )
    calibration_styles: tuple[str, ...] = Field(
        ("question",), description="One question of each style per abstract: question, yesno."
    )
