"""``sciera train soup``: average the weights of cross-encoders fine-tuned from one start
into one model (a *model soup*, Wortsman et al., ICML 2022), chosen on the dev split.

Models trained on from the same weights with different data (labels only, + synthetic
questions, + spliced negatives, another loss) tend to lie in one basin of the loss, where
their average scores at least as well as each of them and costs nothing more at inference.

``greedy`` (the paper's recipe): every ingredient is measured alone on the dev split, then
added best first, each kept only if the soup's dev score does not fall. ``uniform``
averages them all. The dev score is the fused scoring's nDCG@10 (ties: hit@1), with the
calibrators fitted on dev as for a trained model. The ingredients must share the dev
split, the split discipline and the architecture; the soup is refused otherwise.

Every dev measurement is logged (``<model dir>.work/trials.jsonl``), so a rerun resumes.
The card lists each ingredient with the command that made it and every trial. Calibration
questions never come from an abstract any ingredient trained on (its synthetic and SSLI
sources included); the first ingredient's logged questions (``<its dir>.work``) are reused
for the abstracts they cover, so the LLM writes only the missing ones.
"""

from __future__ import annotations

import json
import shlex
import sys
import time
from collections.abc import Callable, Sequence
from dataclasses import dataclass, replace
from pathlib import Path
from typing import Any

from sciera.artifacts.card import read_card
from sciera.errors import ScieraError
from sciera.settings import Settings, load_settings
from sciera.train.cross_encoder_run import (
    TrainResult,
    calibrate_on_dev,
    calibrated_fields,
    saver,
)
from sciera.train.lineage import spec_from_card, trained_beyond_labels
from sciera.train.prepare import DataSpec, Prepared, Progress, install, open_work, prepare
from sciera.train.recalibrate import seed_questions

METHODS = ("greedy", "uniform")
TRIALS = "trials.jsonl"
# card fields the ingredients must agree on: the dev split and what training never saw
_SHARED = ("splits", "max_length")


@dataclass(frozen=True)
class Ingredient:
    name: str
    path: Path
    card: dict[str, Any]
    digest: str  # of its weights: a trial logged for other weights is measured again


@dataclass(frozen=True)
class SoupJob:
    """Everything ``sciera train soup`` takes."""

    models: tuple[str, ...]
    out: str
    method: str = "greedy"
    calibration_questions: int | None = None  # None: as the first ingredient's card says
    overwrite: bool = False

    def __post_init__(self) -> None:
        if self.method not in METHODS:
            raise ScieraError(f"method must be one of {', '.join(METHODS)}, got {self.method!r}")
        if len(set(self.models)) < 2:
            raise ScieraError("a soup needs at least two different models")


def average(states: Sequence[dict[str, Any]]) -> dict[str, Any]:
    """The element-wise mean of state dicts with the same keys and shapes (float32)."""
    first = states[0]
    return {k: sum(s[k].float() for s in states) / len(states) for k in first}


def check_compatible(ingredients: Sequence[Ingredient], states: Sequence[dict[str, Any]]) -> None:
    """Raise unless every ingredient shares the first one's dev split, split discipline,
    data source, max length and weight shapes."""
    ref, ref_state = ingredients[0], states[0]
    ref_spec = _source(ref.card)
    for ing, state in zip(ingredients[1:], states[1:], strict=True):
        diff = [k for k in _SHARED if ing.card.get(k) != ref.card.get(k)]
        if ing.card["data"]["dev_qids"] != ref.card["data"]["dev_qids"]:
            diff.append("data.dev_qids")
        if _source(ing.card) != ref_spec:
            diff.append("data source (corpus, judgments, first stage, dev fraction or seed)")
        if diff:
            raise ScieraError(
                f"{ing.name}: cannot go into one soup with {ref.name}: {', '.join(diff)} differ"
            )
        shapes = {k: tuple(v.shape) for k, v in state.items()}
        if shapes != {k: tuple(v.shape) for k, v in ref_state.items()}:
            raise ScieraError(f"{ing.name}: its weights differ in names or shapes from {ref.name}")


def soup(
    job: SoupJob,
    settings: Settings | None = None,
    progress: Progress | None = None,
    command: str | None = None,
) -> TrainResult:
    from sciera.train.ce_fit import CALIBRATION, dev_rankings

    settings = settings or load_settings()
    started = time.monotonic()
    ingredients, states, ce = _load(job.models, settings)
    model_dir, work = open_work(job.out, settings, job.overwrite)
    seed_questions(ingredients[0].path, work)  # its questions, in its styles: the soup's
    card0 = ingredients[0].card
    spec = replace(spec_from_card(card0), calibration_questions=0)
    data = prepare(spec, settings, work, progress)
    if [r.qid for r in data.dev] != list(card0["data"]["dev_qids"]):
        raise ScieraError(
            f"{ingredients[0].name}: the dev split rebuilt from its card differs from the one "
            "it was trained with (changed judgments or exclusions?)"
        )
    model_id = f"cross_encoder:{model_dir.name}"
    log = _TrialLog(work / TRIALS)
    dev_logits: dict[tuple[int, ...], list[Any]] = {}  # of the soups measured in this run

    def measure(members: Sequence[int]) -> dict[str, Any]:
        picked = [ingredients[i] for i in members]
        done = log.get(picked)
        if done is not None:
            return done
        ce.model.load_state_dict(average([states[i] for i in members]))
        label = f"dev: {' + '.join(i.name for i in picked)}"
        logits = dev_rankings(ce, data.dev, data.texts, progress=progress, label=label)
        dev_logits[tuple(members)] = logits
        return log.add(picked, calibrate_on_dev(data.dev, logits, model_id).modes)

    if job.method == "uniform":
        chosen = list(range(len(ingredients)))
    else:
        chosen = greedy(len(ingredients), lambda m: _score(measure(m)["modes"]))
    banned = trained_beyond_labels([ingredients[i].card for i in chosen], data)
    n_questions = (
        job.calibration_questions
        if job.calibration_questions is not None
        else int(card0["config"].get("calibration_questions", 0))
    )
    if n_questions:
        spec = replace(spec, calibration_questions=n_questions, calibration_banned=tuple(banned))
        data = prepare(spec, settings, work, progress)
    ce.model.load_state_dict(average([states[i] for i in chosen]))
    logits = dev_logits.get(tuple(chosen))
    if logits is None:  # uniform, or measured by an earlier run
        logits = dev_rankings(ce, data.dev, data.texts, progress=progress)
    fitted = calibrate_on_dev(
        data.dev,
        logits,
        model_id,
        data.calibration,
        dev_rankings(ce, data.calibration, data.texts, progress=progress, label=CALIBRATION),
    )
    if log.get([ingredients[i] for i in chosen]) is None:  # uniform: its one trial
        log.add([ingredients[i] for i in chosen], fitted.modes)
    card = _card(
        job,
        model_dir.name,
        ingredients,
        chosen,
        log,
        spec,
        data,
        banned,
        card0,
        command,
        time.monotonic() - started,
    )
    card.update(calibrated_fields(model_id, fitted, int(card0["max_length"])))
    # float16: the ingredients' own storage
    install(model_dir, work, card, saver(ce, fitted, fp16=True))
    return TrainResult(model_dir, card)


def _load(
    models: Sequence[str], settings: Settings
) -> tuple[list[Ingredient], list[dict[str, Any]], Any]:
    """The ingredients, their weights, and the first one loaded (the soups go there),
    checked to fit together."""
    from sciera.artifacts.registry import CROSS_ENCODER, resolve
    from sciera.train.ce_fit import load_cross_encoder

    ingredients = [_ingredient(m, resolve(CROSS_ENCODER, m, settings.home)) for m in models]
    max_length = int(ingredients[0].card["max_length"])
    states = [
        load_cross_encoder(str(i.path), max_length=max_length).model.state_dict()
        for i in ingredients
    ]
    ce = load_cross_encoder(str(ingredients[0].path), max_length=max_length)
    check_compatible(ingredients, states)
    return ingredients, states, ce


def greedy(n: int, score: Callable[[list[int]], tuple[float, ...]]) -> list[int]:
    """Greedy soup over ingredients ``0..n-1``: ranked by their own ``score``, then each
    added (best first) when the soup's score with it does not fall."""
    alone = {i: score([i]) for i in range(n)}
    order = sorted(range(n), key=lambda i: alone[i], reverse=True)
    chosen, best = [order[0]], alone[order[0]]
    for i in order[1:]:
        trial = score([*chosen, i])
        if trial >= best:
            chosen, best = [*chosen, i], trial
    return chosen


def _score(modes: dict[str, dict[str, float]]) -> tuple[float, float]:
    fused = modes["fused"]
    return (round(fused["ndcg@10"], 6), round(fused["hit@1"], 6))


def _source(card: dict[str, Any]) -> DataSpec:
    """Where a card's dev split and first stage come from (calibration aside: its questions,
    their styles and the abstracts banned from them are the soup's own choice)."""
    return replace(
        spec_from_card(card),
        calibration_questions=0,
        calibration_styles=("question",),
        calibration_banned=(),
    )


def _ingredient(name: str, path: str) -> Ingredient:
    import hashlib

    folder = Path(path)
    card = read_card(folder) if folder.is_dir() else None
    if card is None or card.get("kind") != "cross-encoder reranker":
        raise ScieraError(f"{name}: not a cross-encoder trained by sciera (no model card)")
    digest = hashlib.sha256()
    for f in sorted(folder.glob("*.safetensors")) or sorted(folder.glob("*.bin")):
        digest.update(f.read_bytes())
    return Ingredient(name, folder, card, digest.hexdigest()[:16])


class _TrialLog:
    """Dev measurements by ingredient list, appended as they finish (a rerun resumes)."""

    def __init__(self, path: Path) -> None:
        self.path = path
        self.rows: list[dict[str, Any]] = []
        if path.exists():
            for line in path.read_text(encoding="utf-8").splitlines():
                try:
                    self.rows.append(json.loads(line))
                except json.JSONDecodeError:
                    continue  # a line cut short by a crash: measured again

    def get(self, members: Sequence[Ingredient]) -> dict[str, Any] | None:
        digests = [i.digest for i in members]
        return next((r for r in self.rows if r["digests"] == digests), None)

    def add(self, members: Sequence[Ingredient], modes: dict[str, Any]) -> dict[str, Any]:
        row = {"members": [i.name for i in members], "digests": [i.digest for i in members]}
        row["modes"] = modes
        with self.path.open("a", encoding="utf-8") as f:
            f.write(json.dumps(row) + "\n")
        self.rows.append(row)
        return row


def _card(
    job: SoupJob,
    name: str,
    ingredients: Sequence[Ingredient],
    chosen: Sequence[int],
    log: _TrialLog,
    spec: DataSpec,
    data: Prepared,
    banned: list[str],
    card0: dict[str, Any],
    command: str | None,
    seconds: float,
) -> dict[str, Any]:
    from sciera.artifacts.card import versions

    data_card = data.card_data(spec)
    for key in ("train_queries", "train_groups", "synthetic", "ssli_negatives", "skipped"):
        data_card.pop(key, None)  # per ingredient, below
    data_card["calibration_banned"] = banned
    return {
        "name": name,
        "kind": "cross-encoder reranker",
        "base": f"a {job.method} soup of {len(chosen)} of {len(ingredients)} models",
        "command": command or shlex.join(["sciera", *sys.argv[1:]]),
        "config": {
            "method": job.method,
            "max_length": card0["max_length"],
            "retriever": spec.retriever,
            "depth": spec.depth,
            "dev_fraction": spec.dev_fraction,
            "seed": spec.seed,
            "calibration_questions": spec.calibration_questions,
            # recalibrating the soup (e.g. for int8) asks for the same styles again
            "calibration_styles": list(spec.calibration_styles),
        },
        "data": data_card,
        "splits": card0["splits"],
        "soup": {
            "method": job.method,
            "selection": "fused nDCG@10 on dev (ties: hit@1); calibrators fitted on dev",
            "chosen": [ingredients[i].name for i in chosen],
            "ingredients": [
                {
                    "name": i.name,
                    "path": str(i.path),
                    "model_id": i.card.get("model_id"),
                    "command": i.card["command"],
                    **(
                        {"continued_from": i.card["continued_from"]}
                        if "continued_from" in i.card
                        else {}
                    ),
                    "train_queries": i.card["data"].get("train_queries"),
                    "train_groups": i.card["data"].get("train_groups"),
                    "loss": i.card["config"].get("loss"),
                    **{
                        k: i.card["data"][k]
                        for k in ("synthetic", "ssli_negatives", "spliced_negatives")
                        if i.card["data"].get(k)
                    },
                }
                for i in ingredients
            ],
            "trials": log.rows,
        },
        "epochs": [],
        "best_epoch": None,
        "train_seconds": 0.0,
        "wall_seconds": seconds,
        "versions": versions(),
    }
