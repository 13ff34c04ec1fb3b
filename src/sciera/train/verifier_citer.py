"""The citer stage of a verifier run, the last: train the citer (resumable), fit its
calibrator on the dev sentences and choose ``min_quoted`` for the trained verdict's policy
and, with the folder's LLM combiners, the combined verdict's; the weights, the other
calibrators, the rest of both policies and the combiners are kept, so nothing but the citer
is refit (the combined verdict's LLM runs only on the dev abstracts past its gate, once)."""

from __future__ import annotations

import time
from dataclasses import asdict
from pathlib import Path
from typing import Any

from sciera.train.citer_fit import FittedCiter, fit_citer
from sciera.train.verifier_calibrate import dev_sentences, fit_citer_calibrator
from sciera.train.verifier_eval import scifact_scores
from sciera.train.verifier_job import CITER_ADAPTERS, CITER_CALIBRATOR, CITER_PREFIX
from sciera.train.verifier_policy import (
    choose_quoted,
    open_candidates,
    policy_runs,
    relevance,
    union_candidates,
)
from sciera.train.verifier_report import evaluate_claims
from sciera.train.verifier_stages import Run, copy_files, drop_from_folder, install
from sciera.verify import calibration
from sciera.verify.base import VerdictModel
from sciera.verify.llm_verdict import COMBINER_FILES, CombinedVerdict
from sciera.verify.memo import MemoSelector, MemoVerdict
from sciera.verify.network import VerifierNetwork
from sciera.verify.trained import TrainedSelector, TrainedVerdict
from sciera.verify.verifier import VerifyPolicy

STEP = "choosing the quoted sentences on dev"


def citer_stage(run: Run) -> None:
    """Train the citer of ``run.job`` and add it to the verifier in the model folder (a
    recipe without one: take an earlier one out)."""
    from sciera.artifacts.card import read_card, versions

    job, data = run.job, run.data
    if job.citer is None:
        drop_from_folder(run, "citer", (CITER_PREFIX,))
        return
    card = read_card(run.model_dir)
    fitted = fit_citer(job.citer, data, run.work, run.progress)
    net = VerifierNetwork.load(run.model_dir)
    net.citer = fitted.load()
    dev = data.dev_ids
    run.step(STEP, 0, 2)
    sentences = dev_sentences(net, data, union_candidates(data, dev, job.open_k))
    net.citer.calibrator, stats = fit_citer_calibrator(net.citer, sentences)
    quote = _Quoting(run, net)
    policy, trials = quote.choose(
        TrainedVerdict(network=net), VerifyPolicy(**card["policy"]), "quoting: trained verdict"
    )
    run.step(STEP, 1, 2)
    combiner = card.get("combiner") or {}
    if combiner.get("policy") and data.reranked:
        chosen, quote_trials = quote.choose(
            _combined(run, net, combiner),
            VerifyPolicy(**combiner["policy"]),
            "quoting: combined verdict (the LLM reads the dev abstracts past the gate)",
        )
        combiner["policy"] = asdict(chosen)
        combiner.setdefault("policy_search", {})["quote_trials"] = quote_trials
    run.step(STEP, 2, 2)
    card = (
        {k: v for k, v in card.items() if k not in ("dev", "test_fold")}
        | run.head
        | {
            "policy": asdict(policy),
            "citer": citer_section(fitted),
            "citer_added": {"date": time.strftime("%Y-%m-%d")},
            "dev": {
                **card.get("dev", {}),
                "citer_calibration": stats,
                "quote_trials": trials,
                **evaluate_claims(net, data, dev, policy, job.open_k),
            },
            "versions": versions(),
            "wall_seconds": time.monotonic() - run.started,
        }
    )
    if data.test_ids:
        card["test_fold"] = evaluate_claims(net, data, data.test_ids, policy, job.open_k)

    def save(folder: Path) -> None:
        copy_files(run.model_dir, folder, (CITER_PREFIX,))  # the citer's files replaced
        fitted.copy_to(folder, CITER_ADAPTERS)
        calibration.save(net.citer.calibrator, folder / CITER_CALIBRATOR)

    install(run.model_dir, run.work, card, save)


def citer_section(fitted: FittedCiter) -> dict[str, Any]:
    return {
        **fitted.section(CITER_ADAPTERS),
        "calibrator": CITER_CALIBRATOR,
        "training": fitted.report(),
    }


class _Quoting:
    """``min_quoted`` chosen for one verdict model and policy on the dev claims."""

    def __init__(self, run: Run, net: VerifierNetwork) -> None:
        self.run, self.data = run, run.data
        self.selector = MemoSelector(TrainedSelector(network=net))
        dev = self.data.dev_ids
        self.open = open_candidates(self.data, dev, run.job.open_k)
        self.rel = relevance(self.data)

    def choose(
        self, verdict: VerdictModel, policy: VerifyPolicy, step: str
    ) -> tuple[VerifyPolicy, list[Any]]:
        data, dev = self.data, self.data.dev_ids
        selector, progress = self.selector, self.run.progress
        run = policy_runs(
            selector, MemoVerdict(verdict), data, dev, self.open, self.rel, progress, step
        )
        return choose_quoted(policy, dev, lambda p, ids: scifact_scores(data, ids, run(p)))


def _combined(run: Run, net: VerifierNetwork, combiner: dict[str, Any]) -> CombinedVerdict:
    """The folder's combined verdict: the trained verdict and the settings' LLM through its
    combiners."""
    from sciera.llm.registry import make_llm
    from sciera.verify.llm_verdict import LLMVerdict

    combiners = {
        kind: calibration.load(run.model_dir / COMBINER_FILES[kind])
        for kind in combiner.get("files") or {}
    }
    return CombinedVerdict(
        TrainedVerdict(network=net),
        LLMVerdict(make_llm(run.settings)),
        combiners,
        combiner.get("llm"),
    )
