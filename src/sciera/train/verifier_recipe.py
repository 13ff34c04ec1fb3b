"""A verifier recipe: one YAML file that says everything a verifier run does, validated by
:class:`VerifierRecipe` (unknown fields refused) through the loader every ``sciera train
KIND RECIPE.yaml`` shares (:mod:`sciera.train.recipe`: ``--set a.b=value`` overrides, one-line
``file: field.path: problem`` errors), so ``sciera train verifier RECIPE.yaml`` rebuilds the
model it describes. Relative paths are read relative to the YAML file; the run gets them
relative to the current folder, as a command line run there would have given them (they are
part of the run key and the card)."""

from __future__ import annotations

import os
from collections.abc import Sequence
from dataclasses import fields
from pathlib import Path
from typing import Any, Literal

from pydantic import Field, field_validator

from sciera.errors import ScieraError
from sciera.train.citer_fit import CiterConfig
from sciera.train.recipe import Recipe, load_recipe
from sciera.train.verifier_data import VerifierDataSpec
from sciera.train.verifier_fit import VerifierConfig
from sciera.train.verifier_job import COMBINER_PER_LABEL, DeciderConfig, VerifierJob

PATHS = ("claims", "sentences", "corpus", "pubmedqa")
PATH_LISTS = ("ssli_negatives", "exclude_qrels", "exclude_ssli")
Context = Literal["none", "title", "neighbours"]  # sciera.verify.inputs.CONTEXTS


class DataSection(Recipe):
    """Where the training data comes from and how it is split."""

    claims: Path = Field(description="SciFact training claims (claims_train.jsonl).")
    sentences: Path = Field(description="The abstracts as sentence lists (corpus_sentences.jsonl).")
    corpus: Path | None = Field(
        None, description="Ingested, indexed corpus: retrieved non-evidence abstracts."
    )
    retriever: str = Field("hybrid", description="First stage that mines negatives.")
    depth: int = Field(10, ge=1, description="First-stage abstracts mined per claim.")
    retrieved_negatives: int = Field(
        2, ge=0, description="Retrieved non-evidence abstracts per training claim."
    )
    dev_fraction: float = Field(0.12, gt=0, lt=1, description="Share of claims held out as dev.")
    cv_folds: int = Field(5, ge=2, description="Folds of a cross-validation (with cv_fold).")
    cv_fold: int | None = Field(
        None,
        ge=0,
        description="Hold out this fold of the training claims and PubMedQA questions (one "
        "model of a cross-validation; its card lists them).",
    )
    pubmedqa: Path | None = Field(None, description="PubMedQA PQA-L JSON: yes/no/maybe questions.")
    pubmedqa_all: bool = Field(False, description="Train on every PubMedQA question.")
    ssli_negatives: tuple[Path, ...] = Field(
        (), description="Training-side SSLI sets: their distractors as NOT ENOUGH INFO."
    )
    exclude_qrels: tuple[Path, ...] = Field(
        (), description="Evaluation judgments whose queries never enter training."
    )
    exclude_ssli: tuple[Path, ...] = Field(
        (), description="SSLI evaluation sets whose gold abstracts never enter training."
    )
    max_claims: int | None = Field(
        None, ge=1, description="Train on the first N training claims only."
    )
    claim_negations: bool = Field(
        False,
        description="Also train the verdict on each claim negated by rule (labels swapped).",
    )


class ModelSection(Recipe):
    """The encoder and its two heads: the fit stage's hyperparameters."""

    base: str = Field(
        "scifact-minilm",
        description="Start from 'scifact-minilm' (the shipped relevance cross-encoder), "
        "'minilm', 'e5', 'e5-enpt' or a folder.",
    )
    epochs: int = Field(4, ge=1, description="Epochs (the best dev epoch is kept).")
    lr: float = Field(3e-5, gt=0, description="Learning rate of the pretrained body.")
    head_lr: float = Field(5e-4, gt=0, description="Learning rate of the heads.")
    warmup: float = Field(0.1, ge=0, description="Share of steps warming up.")
    weight_decay: float = Field(0.01, ge=0, description="Weight decay.")
    time_budget_minutes: float | None = Field(
        None, gt=0, description="Minutes of training at most."
    )
    context: Context = Field("title", description="A sentence's context for the selector.")
    max_length_rationale: int = Field(128, ge=16, description="Tokens per selector input.")
    max_length_verdict: int = Field(256, ge=16, description="Tokens per verdict input.")
    rationale_batch: int = Field(32, ge=1, description="Selector examples per batch.")
    verdict_batch: int = Field(16, ge=1, description="Verdict examples per batch.")
    hard_negatives: int = Field(2, ge=0, description="Hard negative sentences per abstract.")
    random_negatives: int = Field(1, ge=0, description="Random negative sentences per abstract.")
    rationale_pos_weight: float = Field(2.0, gt=0, description="Weight of a rationale's loss.")
    verdict_weight: float = Field(1.0, gt=0, description="Weight of the verdict's loss.")
    class_weights: bool = Field(True, description="Verdict loss weighted by label frequency.")
    fp16: bool = Field(True, description="Save the weights in float16 (half the size).")


class CalibrateSection(Recipe):
    """The calibrate stage: calibrators and the decision policy, chosen on the dev claims."""

    open_k: int = Field(5, ge=1, description="Top abstracts per dev claim choosing the policy.")
    verdict_bias: bool = Field(
        False, description="Verdict calibrator with a bias per label (else temperature only)."
    )
    min_relevance: float = Field(
        0.5,
        ge=0,
        le=1,
        description="Relevance gate: an abstract below this reranker P(relevant) is NOT "
        "ENOUGH INFO (0: off); fixed, not chosen.",
    )


class CiterSection(Recipe):
    """The citer stage: the relevance cross-encoder with low-rank adapters trained on the
    rationale labels alone, which picks the quoted sentences."""

    base: str = Field("scifact-minilm", description="The cross-encoder the adapters go on.")
    rank: int = Field(16, ge=1, description="Rank of the low-rank adapters.")
    epochs: int = Field(3, ge=1, description="The citer's epochs.")
    lr: float = Field(3e-4, gt=0, description="Learning rate of the adapters.")
    warmup: float = Field(0.1, ge=0, description="Share of steps warming up.")
    weight_decay: float = Field(0.01, ge=0, description="Weight decay.")
    context: Context = Field("none", description="A sentence's context.")
    max_length: int = Field(128, ge=16, description="Tokens per (claim, sentence).")
    batch: int = Field(32, ge=1, description="Examples per batch.")
    hard_negatives: int = Field(2, ge=0, description="Hard negative sentences per abstract.")
    random_negatives: int = Field(1, ge=0, description="Random negative sentences per abstract.")
    pos_weight: float = Field(2.0, gt=0, description="Weight of a rationale's loss.")
    members: int = Field(
        1,
        ge=1,
        description="Citers in the ensemble (mean logit): each other one with 4 hard and 2 "
        "random negatives and the next seed.",
    )


class CombinerSection(Recipe):
    """The combine stage: the verdict head's and the LLM's label probabilities through a
    logistic regression per kind of input (the ``combined`` verdict), and its gate."""

    per_label: int = Field(
        COMBINER_PER_LABEL, ge=10, description="Training inputs per label and kind."
    )
    negated_claim: bool = Field(
        False,
        description="Also ask the LLM each claim negated; the claim combiner reads it when that "
        "raises the cross-validated macro-F1.",
    )
    pooled: dict[str, Path] = Field(
        {},
        description="Labelled pair collections (healthver, covidfact, evidence_inference, "
        "bioasq: their folder or file) whose train pairs join the rows, per_label of each "
        "label per collection.",
    )
    own_claims: bool = Field(
        True, description="The verifier's own training claims are claim rows too."
    )

    @field_validator("pooled")
    @classmethod
    def _known_collections(cls, value: dict[str, Path]) -> dict[str, Path]:
        from sciera.datasets.pairs import PAIR_LOADERS

        known = [k for k in PAIR_LOADERS if k != "scifact"]  # SciFact is the own claims
        unknown = [k for k in value if k not in known]
        if unknown:
            raise ValueError(f"unknown collection {unknown[0]!r} (one of {', '.join(known)})")
        return value


class DeciderSection(Recipe):
    """The decide stage: the question decider (:mod:`sciera.verify.decider`), fitted on
    training questions: BioASQ 7B and 8B with their snippets and the PubMedQA questions the
    verifier trains on."""

    bioasq: Path = Field(
        description="BioASQ training JSON whose questions carry `batch`; its 7B and 8B "
        "yes/no questions are read (9B is dev; later batches are refused)."
    )
    per_label: int = Field(
        50, ge=10, description="Training questions per label and source (seeded draw)."
    )
    abstracts: int = Field(
        5, ge=1, le=50, description="A question's documents read, as the verify stage reads."
    )


class VerifierRecipe(Recipe):
    """Everything one ``sciera train verifier`` run does; a section left out is not run
    (``citer``, ``combiner``) or takes its defaults."""

    out: str = Field(description="Model name (SCIERA_HOME/models/NAME) or a folder.")
    seed: int = Field(0, description="Seed of the dev split, the fit and the citer.")
    preset: str | None = Field(None, description="Settings preset (its LLM combines).")
    threads: int | None = Field(None, ge=1, description="Torch threads (default: torch's).")
    data: DataSection
    model: ModelSection = ModelSection()
    calibrate: CalibrateSection = CalibrateSection()
    citer: CiterSection | None = None
    combiner: CombinerSection | None = None
    decider: DeciderSection | None = None

    def job(self, overwrite: bool = False) -> VerifierJob:
        """The run this recipe describes (a dataclass's check raises ``ValueError`` naming
        its section)."""
        data = self.data.model_dump()
        for name in PATHS:
            data[name] = _as_typed(data[name]) if data[name] is not None else None
        for name in PATH_LISTS:
            data[name] = tuple(_as_typed(p) for p in data[name])
        config = self.model.model_dump(exclude={"fp16"})
        citer = self.citer and _build("citer", CiterConfig, self.citer.model_dump(), self.seed)
        return VerifierJob(
            _build("data", VerifierDataSpec, data, self.seed),
            self.out,
            _build("model", VerifierConfig, config, self.seed),
            open_k=self.calibrate.open_k,
            fp16=self.model.fp16,
            overwrite=overwrite,
            threads=self.threads,
            verdict_bias=self.calibrate.verdict_bias,
            min_relevance=self.calibrate.min_relevance,
            combine_llm=self.combiner is not None,
            combiner_per_label=self.combiner.per_label if self.combiner else None,
            negated_claim=self.combiner.negated_claim if self.combiner else False,
            combiner_pooled=tuple(
                (k, _as_typed(v))
                for k, v in (self.combiner.pooled if self.combiner else {}).items()
            ),
            combiner_own=self.combiner.own_claims if self.combiner else True,
            citer=citer,
            decider=self.decider
            and DeciderConfig(
                _as_typed(self.decider.bioasq), self.decider.per_label, self.decider.abstracts
            ),
        )


def _as_typed(path: Path) -> Path:
    """``path`` relative to the current folder (the way a command line gives it)."""
    return Path(os.path.relpath(path))


def _build(section: str, cls: type, values: dict[str, Any], seed: int) -> Any:
    try:
        return cls(**values, seed=seed)
    except ValueError as exc:
        raise ValueError(f"{section}: {exc}") from None


SECTIONS = {
    "data": (DataSection, VerifierDataSpec, {"seed"}),
    "model": (ModelSection, VerifierConfig, {"seed"}),
    "citer": (CiterSection, CiterConfig, {"seed"}),
}
"""Each recipe section mirroring a config dataclass, and the dataclass fields the recipe
sets elsewhere (the top-level ``seed``); a test checks they stay alike."""


def dataclass_fields(cls: type) -> set[str]:
    return {f.name for f in fields(cls)}


def load_verifier_recipe(path: str | Path, sets: Sequence[str] = ()) -> VerifierRecipe:
    """Read and validate a verifier recipe YAML file with ``--set`` overrides ``sets``;
    a dataclass's own check is a one-line error too."""
    recipe = load_recipe(VerifierRecipe, path, sets)
    try:
        recipe.job()
    except ValueError as exc:
        raise ScieraError(f"{path}: {exc}") from None
    return recipe


def check_paths(recipe: VerifierRecipe, source: str) -> None:
    """Every input the recipe names exists (one line naming the field)."""
    for name in PATHS + PATH_LISTS:
        value = getattr(recipe.data, name)
        for v in value if isinstance(value, tuple) else (value,):
            if v is not None and not Path(v).exists():
                raise ScieraError(f"{source}: data.{name}: no such file or folder: {v}")
    for name, path in (recipe.combiner.pooled if recipe.combiner else {}).items():
        if not path.exists():
            raise ScieraError(f"{source}: combiner.pooled.{name}: no such file or folder: {path}")
    if recipe.decider is not None and not recipe.decider.bioasq.is_file():
        raise ScieraError(f"{source}: decider.bioasq: no such file: {recipe.decider.bioasq}")
