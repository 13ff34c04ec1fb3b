"""What one verifier run is given (:class:`VerifierJob`, built from a recipe by
:mod:`sciera.train.verifier_recipe`), what it returns, the model folder's file names, and
:func:`run_key`, what the trained weights depend on."""

from __future__ import annotations

import hashlib
import json
from collections.abc import Callable
from dataclasses import asdict, dataclass, field
from pathlib import Path
from typing import Any

from sciera.train.citer_fit import CiterConfig
from sciera.train.verifier_data import VerifierDataSpec
from sciera.train.verifier_fit import VerifierConfig

Progress = Callable[[str, int, int], None]
RATIONALE_CALIBRATOR = "sciera-rationale-calibrator.json"
VERDICT_CALIBRATOR = "sciera-verdict-calibrator.json"
CITER_PREFIX = "sciera-citer"
CITER_ADAPTERS = f"{CITER_PREFIX}.safetensors"  # an ensemble's others: sciera-citer-2, ...
CITER_CALIBRATOR = "sciera-citer-calibrator.json"
COMBINER_PER_LABEL = 100
"""The LLM combiners' training inputs per label and kind, unless told otherwise."""


@dataclass(frozen=True)
class DeciderConfig:
    """The decide stage (:mod:`sciera.train.verifier_decider`): the BioASQ training file,
    questions per label and source, documents read per question."""

    bioasq: Path
    per_label: int = 50
    abstracts: int = 5


@dataclass(frozen=True)
class VerifierJob:
    """Everything one verifier run takes (a recipe's content, paths resolved)."""

    data: VerifierDataSpec
    out: str
    config: VerifierConfig = field(default_factory=VerifierConfig)
    open_k: int = 5  # first-stage abstracts per dev claim when choosing the policy
    fp16: bool = True
    overwrite: bool = False
    # torch threads (None: torch's default); how, not what: not in the keys. On a
    # shared, oversubscribed machine one thread trains faster than two.
    threads: int | None = None
    # the verdict calibrator: temperature alone (default) or with a bias per label (which
    # learns the dev pool's label prior: mostly NOT ENOUGH INFO among retrieved abstracts)
    verdict_bias: bool = False
    # the relevance gate on the reranker's calibrated P(relevant): fixed, not chosen on dev
    # (0.5: an abstract more likely evidence than not); 0 turns it off
    min_relevance: float = 0.5
    # fit the LLM combiners (sciera.train.verifier_combiner) on training claims and questions
    combine_llm: bool = False
    # with combine_llm: training inputs per label and kind (None: COMBINER_PER_LABEL)
    combiner_per_label: int | None = None
    # with combine_llm: the LLM also asked each claim negated, read by the claim combiner
    # when it raises the cross-validated macro-F1 on the training rows
    negated_claim: bool = False
    # with combine_llm: (collection, path) of labelled pairs (sciera.datasets.pairs) whose
    # train pairs join the combiners' rows, and whether the verifier's own training claims
    # are rows too (False: the claim combiner learns only from pairs the head never saw)
    combiner_pooled: tuple[tuple[str, Path], ...] = ()
    combiner_own: bool = True
    # also train the citer (sciera.verify.citer: which sentences are quoted, scored apart
    # from the verdict) and choose min_quoted with it, the last stage; not in the run key
    # (the verifier's epochs do not depend on it), so adding one keeps everything else
    citer: CiterConfig | None = None
    # fit the question decider on training questions (the last stage; reads the combined
    # verdict, so it needs combine_llm); not in the run key
    decider: DeciderConfig | None = None

    def __post_init__(self) -> None:
        if self.decider is not None and not self.combine_llm:
            raise ValueError("the question decider reads the combined verdict: add a combiner")
        if (self.combiner_pooled or not self.combiner_own) and not self.combine_llm:
            raise ValueError("combiner.pooled and combiner.own_claims need a combiner")
        if not self.combiner_own and not self.combiner_pooled:
            raise ValueError("combiner.own_claims: false needs combiner.pooled collections")
        if self.negated_claim and not self.combine_llm:
            raise ValueError("--negated-claim is read by the LLM combiners: add --combine-llm")
        if self.combiner_per_label is not None:
            if not self.combine_llm:
                raise ValueError("--combiner-per-label sizes the LLM combiners: add --combine-llm")
            if self.combiner_per_label < 10:
                raise ValueError(
                    f"--combiner-per-label must be at least 10, got {self.combiner_per_label}"
                )

    @property
    def per_label(self) -> int:
        """The combiners' training inputs per label and kind."""
        return self.combiner_per_label or COMBINER_PER_LABEL


@dataclass(frozen=True)
class VerifierResult:
    model_dir: Path
    card: dict[str, Any]


LATER_DATA_OPTIONS = ("claim_negations",)


def _key(blob: Any) -> str:
    text = json.dumps(blob, sort_keys=True, default=str)
    return hashlib.sha256(text.encode()).hexdigest()[:16]


def run_key(job: VerifierJob) -> str:
    """What the epochs depend on (the time budget aside, so a run resumes with a larger
    one). Data options added since the first models are keyed only when set, so those
    models keep their key."""
    conf = {k: v for k, v in asdict(job.config).items() if k != "time_budget_minutes"}
    data = asdict(job.data)
    for name in LATER_DATA_OPTIONS:
        if not data[name]:
            del data[name]
    return _key({"config": conf, "data": data})
