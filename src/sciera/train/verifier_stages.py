"""The stages of a verifier run (see :mod:`sciera.train.verifier_run`), each a function of
one :class:`Run`: :func:`fit_stage` (the heads), :func:`calibrate_stage` (calibrators and
policy; writes the model folder), :func:`combine_stage` (the LLM combiners and the combined
verdict's gate, added to the folder) and :func:`citer_stage` (the citer, its calibrator and
``min_quoted``, added to the folder). Each later stage reads what the earlier ones left in
the model folder (or, in the same process, in memory), so a rerun starts at the first stage
not done."""

from __future__ import annotations

import copy
import json
import shutil
import time
from collections.abc import Callable, Iterable
from dataclasses import asdict, dataclass, field, replace
from pathlib import Path
from typing import Any

from sciera.errors import ScieraError
from sciera.settings import Settings
from sciera.train.recipe import stage_log
from sciera.train.verifier_calibrate import Chosen, calibrate_and_choose
from sciera.train.verifier_data import VerifierData
from sciera.train.verifier_eval import SELECT
from sciera.train.verifier_fit import fit_verifier, load_for_training
from sciera.train.verifier_job import (
    CITER_PREFIX,
    RATIONALE_CALIBRATOR,
    VERDICT_CALIBRATOR,
    Progress,
    VerifierJob,
    run_key,
)
from sciera.train.verifier_policy import choose_combined_policy
from sciera.train.verifier_report import evaluate_claims, evaluate_pubmedqa, same_dev_as_reranker
from sciera.types import VERDICT_LABELS
from sciera.verify.llm_verdict import COMBINER_FILES, CombinedVerdict
from sciera.verify.memo import MemoSelector, MemoVerdict
from sciera.verify.network import VerifierNetwork
from sciera.verify.trained import TrainedSelector, TrainedVerdict
from sciera.verify.verifier import VerifyPolicy

KIND = "claim verifier (rationale selector + verdict model, one encoder)"
FIT_ENTRIES = ("run_key", "epochs", "best_epoch", "select_metric", "train_seconds")
FIT_FILE = "fit.json"  # the fit stage's card entries, in the work folder


@dataclass
class Run:
    """One verifier run: its job, where it works, its data, and what its stages hand on
    in memory (the calibrated network, once the calibrate stage ran in this process)."""

    job: VerifierJob
    settings: Settings
    model_dir: Path
    work: Path
    data: VerifierData
    head: dict[str, Any]  # the card's first entries: name, kind, base, command, recipe
    progress: Progress | None = None
    fitted_here: bool = False
    net: VerifierNetwork | None = None
    policy: VerifyPolicy | None = None
    started: float = field(default_factory=time.monotonic)

    def step(self, what: str, done: int, total: int) -> None:
        if self.progress:
            self.progress(what, done, total)


def open_folders(job: VerifierJob, settings: Settings) -> tuple[Path, Path, bool]:
    """(model folder, work folder, whether its stage log stands). A folder holding a
    verifier with this run key keeps its weights (the fit stage reads its card); another
    verifier, or anything else, there is replaced only with ``job.overwrite``."""
    from sciera.artifacts.card import read_card
    from sciera.train.prepare import model_dir_for, open_work

    model_dir = model_dir_for(job.out, settings)
    previous = read_card(model_dir) if model_dir.is_dir() else None
    if previous and "heads" in previous and not job.overwrite:
        if previous.get("run_key") != run_key(job):
            raise ScieraError(
                f"{model_dir}: holds a verifier trained with other model or data settings; "
                "pass --overwrite to train anew"
            )
        work = model_dir.with_name(model_dir.name + ".work")
        work.mkdir(parents=True, exist_ok=True)
        return model_dir, work, True
    model_dir, work = open_work(job.out, settings, job.overwrite, run_key(job))
    return model_dir, work, False


def fit_stage(run: Run) -> None:
    """Fit the heads (resumable per epoch), unless the model folder holds them with this
    run key; the card entries it makes go to the work folder."""
    entries = _fitted_in_folder(run)
    if entries is None:
        state = fit_verifier(run.job.config, run.data, run.work, run.progress)
        if state.best_epoch is None:
            raise ScieraError(
                "training ended before one epoch was evaluated; raise the time budget"
            )
        run.fitted_here = True
        entries = {
            "run_key": run_key(run.job),
            "epochs": [asdict(e) for e in state.epochs],
            "best_epoch": state.best_epoch,
            "select_metric": SELECT,
            "train_seconds": state.seconds,
        }
    (run.work / FIT_FILE).write_text(json.dumps(entries, indent=1) + "\n")


def _fitted_in_folder(run: Run) -> dict[str, Any] | None:
    """The fit entries of the model folder's card when it holds this run's heads."""
    from sciera.artifacts.card import read_card

    card = read_card(run.model_dir) if run.model_dir.is_dir() else None
    if card and card.get("run_key") == run_key(run.job):
        return {k: card[k] for k in FIT_ENTRIES if k in card}
    return None


def fit_entries(run: Run) -> dict[str, Any]:
    """What the fit stage left for the card: its file in the work folder, else (a work
    folder emptied, or a model fitted before the file existed) the model folder's card
    when it holds this run's heads; checked before a later stage starts its work."""
    path = run.work / FIT_FILE
    if path.is_file():
        return json.loads(path.read_text(encoding="utf-8"))
    entries = _fitted_in_folder(run)
    if entries is None:
        raise ScieraError(
            f"{path}: missing, and {run.model_dir} does not hold this run's fitted heads "
            f"(card run_key); delete {stage_log(run.model_dir)} to run the fit stage again"
        )
    return entries


def calibrate_stage(run: Run) -> None:
    """Calibrate and choose the policy on dev, report the held-out sets, and write the
    model folder: the weights (the best epoch's float32 checkpoint when kept, else the
    folder's), calibrators and card."""
    job = run.job
    fitted = fit_entries(run)
    best = run.work / "best"
    weights = best if (best / "config.json").is_file() else run.model_dir
    model, tok = load_for_training(str(weights))
    model.eval()
    net = VerifierNetwork(model, tok, job.config.inputs)
    chosen = calibrate_and_choose(
        net,
        run.data,
        job.open_k,
        run.progress,
        bias=job.verdict_bias,
        min_relevance=job.min_relevance,
    )
    card = {**run.head, **fitted}
    if not run.fitted_here:
        card["recalibrated"] = {
            "date": time.strftime("%Y-%m-%d"),
            "weights_from": "the best epoch's float32 checkpoint"
            if weights == best
            else "the model folder's weights",
        }
    card.update(card_entries(job, net, run.data, chosen))
    card["wall_seconds"] = time.monotonic() - run.started
    install(run.model_dir, run.work, card, _save_calibrated(job, model, tok, chosen))
    run.net, run.policy = net, chosen.policy


def card_entries(
    job: VerifierJob, net: VerifierNetwork, data: VerifierData, chosen: Chosen
) -> dict[str, Any]:
    """The calibrate stage's card entries: settings, data, files, the policy and the dev
    and held-out reports."""
    from sciera.artifacts.card import versions

    calibrators = {"rationale": RATIONALE_CALIBRATOR, "verdict": VERDICT_CALIBRATOR}
    entries: dict[str, Any] = {
        "config": {
            **asdict(job.config),
            "fp16": job.fp16,
            "open_k": job.open_k,
            "verdict_bias": job.verdict_bias,
        },
        "data": data.card_data(job.data),
        "splits": data.guard.describe(),
        "heads": {"rationale": 0, "verdict": [1, 2, 3], "labels": list(VERDICT_LABELS)},
        "inputs": job.config.inputs,
        "calibrators": calibrators,
        "policy": asdict(chosen.policy),
        "dev": {
            **chosen.report,
            **evaluate_claims(net, data, data.dev_ids, chosen.policy, job.open_k),
        },
        "versions": versions(),
    }
    if data.test_ids:
        entries["test_fold"] = evaluate_claims(net, data, data.test_ids, chosen.policy, job.open_k)
    if data.pubmedqa_held:
        entries["pubmedqa_held_out"] = evaluate_pubmedqa(net, data)
    entries["dev_same_as_shipped_reranker"] = same_dev_as_reranker(data.dev_ids)
    return entries


def _save_calibrated(
    job: VerifierJob, model: Any, tok: Any, chosen: Chosen
) -> Callable[[Path], None]:
    """What writes the calibrate stage's files: the weights (in half precision with
    ``job.fp16``; the model in memory stays as it is for the later stages), the tokenizer
    and the calibrators."""
    from sciera.verify import calibration

    def save(folder: Path) -> None:
        (copy.deepcopy(model).half() if job.fp16 else model).save_pretrained(str(folder))
        tok.save_pretrained(str(folder))
        calibration.save(chosen.rationale, folder / RATIONALE_CALIBRATOR)
        calibration.save(chosen.verdict, folder / VERDICT_CALIBRATOR)

    return save


def combine_stage(run: Run) -> None:
    """Fit the LLM combiners on training claims and questions (with the network the
    calibrate stage left, in memory or in the folder, without a citer), choose the combined
    verdict's gate on dev, and add both to the model folder."""
    from sciera.artifacts.card import read_card

    if not run.job.combine_llm:
        drop_from_folder(run, "combiner", tuple(COMBINER_FILES.values()))
        return
    if run.net is None or run.policy is None:
        run.net = VerifierNetwork.load(run.model_dir)
        run.net.citer = None  # the citer stage comes after, and quotes apart
        run.policy = replace(VerifyPolicy(**read_card(run.model_dir)["policy"]), min_quoted=None)
    net, data, job = run.net, run.data, run.job
    # the combiners read what the reading rule picks: citing is chosen apart, after
    reading = replace(run.policy, min_cited=None)
    combiners, section, llm = fit_combiners(job, net, data, reading, run.progress, run.settings)
    if "claim" in combiners and data.reranked:
        run.step("choosing the combined verdict's gate on dev", 0, 1)
        verdict = MemoVerdict(CombinedVerdict(TrainedVerdict(network=net), llm, combiners))
        selector = MemoSelector(TrainedSelector(network=net))
        policy, search = choose_combined_policy(
            selector, verdict, data, run.policy, job.open_k, progress=run.progress
        )
        section["policy"] = asdict(policy)
        section["policy_search"] = search
        run.step("choosing the combined verdict's gate on dev", 1, 1)
    card = {k: v for k, v in read_card(run.model_dir).items() if k not in ("citer", "citer_added")}
    card.update(run.head)  # this run's command and recipe
    card["combiner"] = section
    card["wall_seconds"] = time.monotonic() - run.started
    replaced = (*COMBINER_FILES.values(), CITER_PREFIX)

    def save(folder: Path) -> None:
        from sciera.verify import calibration

        copy_files(run.model_dir, folder, replaced)
        for kind, combiner in combiners.items():
            calibration.save(combiner, folder / COMBINER_FILES[kind])

    install(run.model_dir, run.work, card, save)


def fit_combiners(
    job: VerifierJob,
    net: VerifierNetwork,
    data: VerifierData,
    policy: VerifyPolicy,
    progress: Progress | None,
    settings: Settings,
) -> tuple[dict[str, Any], dict[str, Any], Any]:
    """The LLM combiners (the settings' LLM), their card section and the LLM verdict model
    they combine."""
    from sciera.datasets.pairs import load_pairs
    from sciera.llm.registry import make_llm
    from sciera.train.verifier_combiner import combiner_rows, natural_counts
    from sciera.train.verifier_combiner import fit_combiners as fit
    from sciera.verify.llm_verdict import LLMVerdict

    llm = make_llm(settings)
    verdict = LLMVerdict(llm)

    def step(n: int, total: int) -> None:
        if progress:
            progress("LLM label probabilities on training claims", n, total)

    pooled = [
        pair for source, path in job.combiner_pooled for pair in load_pairs(source, path, "train")
    ]
    rows = combiner_rows(
        data,
        TrainedSelector(network=net),
        TrainedVerdict(network=net),
        verdict,
        policy,
        per_label=job.per_label,
        seed=job.data.seed,
        progress=step,
        negated=job.negated_claim,
        pooled=pooled,
        own=job.combiner_own,
    )
    combiners, report = fit(rows, natural=natural_counts(data))
    section = {
        "llm": llm.model_id,
        "prompts": LLMVerdict.version(),
        "fitted_on": _fitted_on(job),
        "per_label": job.per_label,
        "prior": "the training data's label mix (intercepts corrected from the capped rows')",
        "files": {k: COMBINER_FILES[k] for k in combiners},
        **report,
    }
    return combiners, section, verdict


def _fitted_on(job: VerifierJob) -> str:
    """What the combiners' card says they were fitted on."""
    own = "the verifier's training claims (evidence and cited abstracts) and "
    own = own if job.combiner_own else ""
    pooled = ", ".join(k for k, _ in job.combiner_pooled)
    also = f"; the train pairs of {pooled}" if pooled else ""
    return f"{own}training PubMedQA questions{also}; never dev or held-out ones"


def drop_from_folder(run: Run, entry: str, files: tuple[str, ...]) -> None:
    """Take a card ``entry`` (``combiner``, ``citer``) and its ``files`` out of the model
    folder, where an earlier run of a recipe that had it put them; policies no longer quote
    with a citer."""
    from sciera.artifacts.card import read_card

    card = read_card(run.model_dir)
    if entry not in card:
        return
    card = {k: v for k, v in card.items() if k != entry and k != f"{entry}_added"}
    if entry == "citer":
        card["policy"] = {**card["policy"], "min_quoted": None}
        if (card.get("combiner") or {}).get("policy"):
            card["combiner"]["policy"] = {**card["combiner"]["policy"], "min_quoted": None}
    card.update(run.head)
    install(run.model_dir, run.work, card, lambda f: copy_files(run.model_dir, f, files))


def copy_files(source: Path, folder: Path, replaced: Iterable[str]) -> None:
    """Copy ``source``'s files into ``folder``, but those whose name starts with one of
    ``replaced`` (a stage writes them anew)."""
    starts = tuple(replaced)
    for f in source.iterdir():
        if f.is_file() and not f.name.startswith(starts):
            shutil.copyfile(f, folder / f.name)


def install(
    model_dir: Path, work: Path, card: dict[str, Any], save: Callable[[Path], None]
) -> None:
    """Write the model, its card and (last) its manifest into a temporary folder, then swap
    it in, so a crash never leaves a half-written model folder under the model's name."""
    from sciera.artifacts.manifest import write_manifest
    from sciera.train.verifier_card import write_card

    tmp = model_dir.with_name(model_dir.name + ".tmp")
    shutil.rmtree(tmp, ignore_errors=True)
    tmp.mkdir(parents=True)
    save(tmp)
    write_card(tmp, card)
    write_manifest(tmp)
    if model_dir.exists():
        shutil.rmtree(model_dir)
    tmp.rename(model_dir)
    (work / "card.json").write_text(json.dumps(card, indent=1) + "\n")
