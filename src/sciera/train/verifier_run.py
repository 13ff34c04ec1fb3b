"""``sciera train verifier RECIPE.yaml``: from SciFact claims (and PubMedQA questions, SSLI
distractors) to a verifier model folder with its card, in stages of one run:

- **prepare**: split guard, dev split of whole claims (and a held-out CV fold when asked),
  retrieved negatives and zero-shot sentence scores (:func:`prepare_verifier`; cached in
  the work folder, so every run reads them back);
- **fit**: the heads (:func:`sciera.train.verifier_fit.fit_verifier`, resumable per epoch;
  nothing to do when the model folder holds a verifier with the same run key);
- **calibrate**: the calibrators and the decision policy on the dev claims
  (:mod:`sciera.train.verifier_calibrate`), the held-out reports; writes the model folder;
- **combine** (with a ``combiner`` section): the LLM combiners and the combined verdict's
  gate, added to the folder;
- **citer** (with a ``citer`` section): the citer, its calibrator and ``min_quoted``,
  added to the folder (:mod:`sciera.train.verifier_citer`);
- **decide** (with a ``decider`` section): the question decider, fitted on training
  questions (BioASQ 7B and 8B, the PubMedQA training questions), added to the folder
  (:mod:`sciera.train.verifier_decider`).

Work files live in ``<model dir>.work/``; the stage log (``<model dir>.recipe.json``,
:class:`sciera.train.recipe.StageLog`) records each stage done with its settings, so
rerunning the recipe skips them and a changed stage runs again, with every stage after it.
"""

from __future__ import annotations

import shlex
import sys
from collections.abc import Callable, Mapping
from dataclasses import asdict
from typing import Any

from sciera.settings import Settings, load_settings
from sciera.train.recipe import Stage, StageLog, run_stages, stage_log
from sciera.train.verifier_citer import citer_stage
from sciera.train.verifier_data import prepare_verifier
from sciera.train.verifier_decider import decider_stage
from sciera.train.verifier_job import Progress, VerifierJob, VerifierResult, run_key
from sciera.train.verifier_stages import (
    KIND,
    Run,
    calibrate_stage,
    combine_stage,
    fit_stage,
    open_folders,
)


def train_verifier(
    job: VerifierJob,
    settings: Settings | None = None,
    progress: Progress | None = None,
    command: str | None = None,
    recipe: Mapping[str, Any] | None = None,
    say: Callable[[str], None] | None = None,
) -> VerifierResult:
    """Run the stages of ``job`` not done before and return its model folder and card;
    ``recipe`` (what :func:`sciera.train.recipe.recipe_record` gives) and ``command`` go
    into the card; ``say`` hears which stage runs or is skipped."""
    from sciera.artifacts.card import read_card

    settings = settings or load_settings()
    if job.threads is not None:
        import torch

        torch.set_num_threads(job.threads)
    model_dir, work, kept = open_folders(job, settings)
    log_path = stage_log(model_dir)
    if not kept:
        log_path.unlink(missing_ok=True)  # a new (or replaced) model: every stage runs
    data = prepare_verifier(job.data, settings, work, progress)
    head: dict[str, Any] = {"name": model_dir.name, "kind": KIND, "base": job.config.base}
    head["command"] = command or shlex.join(["sciera", *sys.argv[1:]])
    if recipe is not None:
        head["recipe"] = dict(recipe)
    run = Run(job, settings, model_dir, work, data, head, progress)
    run_stages(stages(run), StageLog(log_path), say or (lambda line: None))
    return VerifierResult(model_dir, read_card(model_dir))


def stages(run: Run) -> list[Stage]:
    """The stages of ``run``'s job, each with the settings that make it run again; a
    section the recipe leaves out (``combiner``, ``citer``) is a stage with no settings,
    which takes what an earlier run put in the folder out of it."""
    job = run.job
    calibrate = {
        "open_k": job.open_k,
        "verdict_bias": job.verdict_bias,
        "min_relevance": job.min_relevance,
        "fp16": job.fp16,
    }
    combine = (
        {"per_label": job.per_label, "negated_claim": job.negated_claim}
        if job.combine_llm
        else None
    )
    if combine is not None and job.combiner_pooled:  # only when set: older logs stay valid
        combine["pooled"] = [[k, str(v)] for k, v in job.combiner_pooled]
    if combine is not None and not job.combiner_own:
        combine["own_claims"] = False
    return [
        Stage("fit", run_key(job), lambda: fit_stage(run)),
        Stage("calibrate", calibrate, lambda: calibrate_stage(run)),
        Stage("combine", combine, lambda: combine_stage(run)),
        Stage("citer", asdict(job.citer) if job.citer else None, lambda: citer_stage(run)),
        Stage("decide", asdict(job.decider) if job.decider else None, lambda: decider_stage(run)),
    ]
