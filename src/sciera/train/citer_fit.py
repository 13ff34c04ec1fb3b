"""Train the citer (:mod:`sciera.verify.citer`): the shipped relevance cross-encoder with
low-rank adapters, fitted on the verifier's rationale labels alone.

Why apart from the verifier: the verifier's rationale head shares its encoder with the
verdict head, and the joint training costs it the sentence ranking; a selector trained on
the rationale loss alone ranks a claim's rationale sentences better (average precision over
the dev claims' evidence sentences 0.63-0.65 against the head's 0.46 in the probe
``git show e7f0f65:benchmarks/verify_selector_probe.py``, results in
``benchmarks/results/verify_selector/``). Adapters keep it within the model budget: rank 16
trains 0.8 M parameters (1.6 MB in float16) beside the cross-encoder sciera ships anyway,
where a second full encoder would add 45 MB.

Recipe (:class:`CiterConfig`, all in the verifier's card): the verifier's training claims
and sentence examples (every gold rationale; per claim and abstract the two sentences the
zero-shot scorer ranks highest and one random other, drawn afresh each epoch), binary
cross-entropy with positives weighted 2, AdamW with warm-up and linear decay, the epoch loop
of :mod:`sciera.train.loop` (resumable; the epoch with the best dev average precision kept).
Dev metrics: average precision over the sentences of the dev claims' evidence abstracts, and
the share of those abstracts whose best-scored sentence is a gold rationale.
"""

from __future__ import annotations

import hashlib
import json
import random
import shutil
from dataclasses import asdict, dataclass, field, replace
from pathlib import Path
from typing import Any

import numpy as np

from sciera.embed.adapters import adapter_state, add_adapters, load_adapters, save_adapters
from sciera.embed.plain import encode_pairs
from sciera.errors import ScieraError, require
from sciera.eval.metrics.ranking import scored_average_precision
from sciera.train.loop import EpochTrainer, LoopConfig, Progress, TrainState, steps_for
from sciera.train.verifier_data import VerifierData
from sciera.train.verifier_fit import sample_sentences
from sciera.verify.citer import Citer
from sciera.verify.inputs import CONTEXTS

ADAPTERS = "adapters.safetensors"
SHIPPED_ADAPTERS = "citer.safetensors"  # float16, what a model folder ships
# an ensemble's members after the first: more negatives per abstract, another seed
MEMBER_HARD_NEGATIVES = 4
MEMBER_RANDOM_NEGATIVES = 2


@dataclass(frozen=True)
class CiterConfig:
    """Hyperparameters of the citer (recorded in the verifier's card)."""

    base: str = "scifact-minilm"
    rank: int = 16
    epochs: int = 3
    lr: float = 3e-4
    warmup: float = 0.1
    weight_decay: float = 0.01
    seed: int = 0
    context: str = "none"
    max_length: int = 128
    batch: int = 32
    hard_negatives: int = 2
    random_negatives: int = 1
    pos_weight: float = 2.0
    members: int = 1  # > 1: an ensemble (:meth:`member`)

    def __post_init__(self) -> None:
        if self.rank < 1 or self.epochs < 1 or self.batch < 1 or self.members < 1:
            raise ValueError("the citer's rank, epochs, batch and members must be at least 1")
        if self.context not in CONTEXTS:
            raise ValueError(f"context must be one of {', '.join(CONTEXTS)}, got {self.context!r}")

    @property
    def alpha(self) -> float:
        return 2.0 * self.rank

    def member(self, k: int) -> CiterConfig:
        """The recipe of the ensemble's member ``k`` (0: this one), one citer each."""
        if not 0 <= k < self.members:
            raise ValueError(f"member {k} of a {self.members}-member citer")
        one = replace(self, members=1)
        if k == 0:
            return one
        return replace(
            one,
            hard_negatives=MEMBER_HARD_NEGATIVES,
            random_negatives=MEMBER_RANDOM_NEGATIVES,
            seed=self.seed + k,
        )

    def key(self) -> str:
        """What one citer's epochs depend on (its work folder's name; ``members`` is not
        part of it: each member trains in the folder of its own recipe)."""
        fields = {k: v for k, v in asdict(self).items() if k != "members"}
        blob = json.dumps(fields, sort_keys=True)
        return hashlib.sha256(blob.encode()).hexdigest()[:12]


def evidence_ranking(citer: Citer, data: VerifierData, ids: list[str]) -> dict[str, float]:
    """Average precision over the sentences of the claims' evidence abstracts (by the
    citer's logits), and the share of those abstracts whose best sentence is a rationale."""
    scores: list[np.ndarray] = []
    labels: list[np.ndarray] = []
    hits = n = 0
    for cid in ids:
        claim = data.claims[cid]
        docs = [d for d in claim.evidence if d in data.abstracts]
        if not docs:
            continue
        abstracts = [data.abstracts[d] for d in docs]
        for d, x in zip(docs, citer.logits(claim.claim, abstracts), strict=True):
            y = np.array(claim.rationale_labels(d, len(x)))
            scores.append(x)
            labels.append(y)
            n += 1
            hits += int(len(x) > 0 and y[int(np.argmax(x))] == 1)
    if not n:
        return {"average_precision": 0.0, "best_right": 0.0, "abstracts": 0}
    ap = scored_average_precision(np.concatenate(scores), np.concatenate(labels))
    return {"average_precision": round(ap, 4), "best_right": round(hits / n, 4), "abstracts": n}


class CiterTrainer(EpochTrainer):
    select_metric = "average_precision"

    def __init__(
        self, cfg: CiterConfig, data: VerifierData, work: Path, progress: Progress | None
    ) -> None:
        self.cfg, self.data = cfg, data
        self.n_sentences = len(
            sample_sentences(
                data.sentence_examples, cfg.hard_negatives, cfg.random_negatives, random.Random(0)
            )
        )
        loop = LoopConfig(cfg.epochs, cfg.lr, cfg.lr, cfg.warmup, cfg.weight_decay, cfg.seed, None)
        super().__init__(loop, work, progress)

    def load_model(self) -> Any:
        import torch

        from sciera.train.verifier_fit import resolve_verifier_base

        transformers = require("transformers", "dense")
        base = resolve_verifier_base(self.cfg.base)
        self.tokenizer = transformers.AutoTokenizer.from_pretrained(base)
        model = transformers.AutoModelForSequenceClassification.from_pretrained(
            base, dtype=torch.float32
        ).float()
        if int(model.config.num_labels) != 1:
            raise ScieraError(f"the citer's base {self.cfg.base!r} is not a one-output classifier")
        self.trainable = add_adapters(model, self.cfg.rank, self.cfg.alpha)
        if self.resuming:
            state, _, _ = load_adapters(self.checkpoint / ADAPTERS)
            missing = set(state) - {n for n, _ in model.named_parameters()}
            if missing:
                raise ScieraError(f"{self.checkpoint}: unknown weights {sorted(missing)[:3]}")
            model.load_state_dict(state, strict=False)
        return model

    def save_model(self, path: Path) -> None:
        path.mkdir(parents=True, exist_ok=True)
        state = adapter_state(self.model)
        save_adapters(state, path / ADAPTERS, self.cfg.rank, self.cfg.alpha, fp16=False)

    def steps_per_epoch(self) -> int:
        return steps_for(self.n_sentences, self.cfg.batch)

    def batches(self, rng: random.Random) -> list[list[Any]]:
        cfg = self.cfg
        sents = sample_sentences(
            self.data.sentence_examples, cfg.hard_negatives, cfg.random_negatives, rng
        )
        rng.shuffle(sents)
        return [sents[i : i + cfg.batch] for i in range(0, len(sents), cfg.batch)]

    def citer(self) -> Citer:
        return Citer(
            self.model, self.tokenizer, context=self.cfg.context, max_length=self.cfg.max_length
        )

    def batch_loss(self, batch: list[Any]) -> Any:
        import torch

        citer = self.citer()
        pairs = [
            citer.pairs(self.data.claims[e.claim_id].claim, self.data.abstracts[e.doc_id])[e.index]
            for e in batch
        ]
        tokens = encode_pairs(self.tokenizer, pairs, self.cfg.max_length)
        logits = self.model(**tokens).logits[:, 0]
        y = torch.tensor([float(e.label) for e in batch])
        pos = torch.tensor(self.cfg.pos_weight)
        return torch.nn.functional.binary_cross_entropy_with_logits(logits, y, pos_weight=pos)

    def evaluate(self) -> dict[str, float]:
        return evidence_ranking(self.citer(), self.data, list(self.data.dev_ids))


@dataclass(frozen=True)
class FittedCiter:
    """A trained citer: its float16 adapter file (what ships), the training log, and the
    card section a model folder states it with (without the calibrator, fitted later); an
    ensemble's other members in ``members``."""

    adapters: Path
    state: TrainState
    trainable: int
    cfg: CiterConfig
    members: tuple[FittedCiter, ...] = field(default=())

    def files(self, adapters: str) -> list[str]:
        """The adapter file names a model folder ships: ``adapters``, then for each other
        member the same name with ``-2``, ``-3``, ... before its suffix."""
        stem, dot, suffix = adapters.partition(".")
        return [adapters] + [f"{stem}-{k + 2}{dot}{suffix}" for k in range(len(self.members))]

    def section(self, adapters: str) -> dict[str, Any]:
        files = self.files(adapters)
        return {
            "base": self.cfg.base,
            "adapters": files[0] if len(files) == 1 else files,
            "context": self.cfg.context,
            "max_length": self.cfg.max_length,
            "rank": self.cfg.rank,
            "alpha": self.cfg.alpha,
        }

    def report(self) -> dict[str, Any]:
        out = {
            "config": asdict(self.cfg),
            "trainable_parameters": self.trainable,
            "epochs": [asdict(e) for e in self.state.epochs],
            "best_epoch": self.state.best_epoch,
            "select_metric": CiterTrainer.select_metric,
            "train_seconds": round(self.state.seconds, 1),
        }
        if self.members:
            out["members"] = [m.report() for m in self.members]
        return out

    def paths(self) -> list[Path]:
        return [self.adapters] + [m.adapters for m in self.members]

    def copy_to(self, folder: Path, adapters: str) -> None:
        """Copy every member's adapter file into ``folder`` under :meth:`files`' names."""
        for src, name in zip(self.paths(), self.files(adapters), strict=True):
            shutil.copyfile(src, folder / name)

    def load(self) -> Citer:
        """The citer as inference loads it (adapters merged, no calibrator yet)."""
        # each member's file is in its own folder: absolute names
        section = self.section(self.adapters.name)
        return Citer.load(Path("/"), {**section, "adapters": [str(p) for p in self.paths()]})


def fit_citer(
    cfg: CiterConfig, data: VerifierData, work: Path, progress: Progress | None = None
) -> FittedCiter:
    """Train (or resume, or reuse) the citer in ``work/citer-<key>``; the best epoch's
    adapters, in float16, are its ``citer.safetensors``. An ensemble trains each member
    (:meth:`CiterConfig.member`) in its own folder."""
    if not data.sentence_examples:
        raise ScieraError("no rationale example to train the citer on")
    if not data.dev_ids:
        raise ScieraError("the dev split is empty: the citer chooses its epoch on it")
    fitted = [
        _fit_one(cfg.member(k), data, work, _member_progress(progress, k, cfg.members))
        for k in range(cfg.members)
    ]
    return replace(fitted[0], cfg=cfg, members=tuple(fitted[1:]))


def _member_progress(progress: Progress | None, k: int, members: int) -> Progress | None:
    """An ensemble member's progress, named (``citer 2/2: epoch 1/3``)."""
    if progress is None or members == 1:
        return progress
    return lambda what, n, total: progress(f"citer {k + 1}/{members}: {what}", n, total)


def _fit_one(
    cfg: CiterConfig, data: VerifierData, work: Path, progress: Progress | None
) -> FittedCiter:
    folder = work / f"citer-{cfg.key()}"
    folder.mkdir(parents=True, exist_ok=True)
    trainer = CiterTrainer(cfg, data, folder, progress)
    state = trainer.fit()
    if state.best_epoch is None:
        raise ScieraError(f"{folder}: the citer trained no epoch")
    best, rank, alpha = load_adapters(folder / "best" / ADAPTERS)
    shipped = folder / SHIPPED_ADAPTERS
    save_adapters(best, shipped, rank, alpha)
    return FittedCiter(shipped, state, trainer.trainable, cfg)
