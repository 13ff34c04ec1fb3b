"""The epoch loop every sciera trainer shares: seeded epochs, AdamW with a body and a head
learning rate, linear warm-up and decay, a dev evaluation after every epoch with the best
epoch's model kept, a checkpoint after every epoch (a killed run resumes at the epoch it was
in) and a time budget that ends training at a step boundary.

A trainer subclasses :class:`EpochTrainer` and says what is model-specific: how to load the
model (from the base or, on resume, from :attr:`EpochTrainer.checkpoint`), the batches of an
epoch, the loss of a batch, the dev metrics and how to save the model.
"""

from __future__ import annotations

import json
import logging
import math
import random
import shutil
import time
from abc import ABC, abstractmethod
from collections.abc import Callable, Sequence
from dataclasses import asdict, dataclass, field
from pathlib import Path
from typing import Any

import numpy as np

log = logging.getLogger(__name__)
Progress = Callable[[str, int, int], None]


@dataclass
class EpochResult:
    epoch: int
    steps: int
    mean_loss: float
    dev: dict[str, float]
    seconds: float
    partial: bool = False


@dataclass
class TrainState:
    """What survives a restart: finished epochs and the best one so far."""

    epochs: list[EpochResult] = field(default_factory=list)
    best_epoch: int | None = None
    seconds: float = 0.0

    def to_json(self) -> str:
        return json.dumps(asdict(self), indent=1)

    @classmethod
    def load(cls, path: Path) -> TrainState:
        data = json.loads(path.read_text())
        return cls([EpochResult(**e) for e in data["epochs"]], data["best_epoch"], data["seconds"])


@dataclass(frozen=True)
class LoopConfig:
    """The loop's own hyperparameters (a trainer's config carries them under these names)."""

    epochs: int
    lr: float
    head_lr: float
    warmup: float
    weight_decay: float
    seed: int
    time_budget_minutes: float | None


class EpochTrainer(ABC):
    """Subclasses set ``self.model`` (a torch module with ``save_pretrained``) in
    :meth:`load_model`, then the loop runs with :meth:`fit`."""

    select_metric = "ndcg@10"  # the dev metric that picks the best epoch

    def __init__(self, loop: LoopConfig, work: Path, progress: Progress | None) -> None:
        import torch

        self.torch, self.loop, self.work, self.progress = torch, loop, work, progress
        self.checkpoint = work / "checkpoint"
        self.best_dir = work / "best"
        self.state_file = work / "state.json"
        torch.manual_seed(loop.seed)
        self.resuming = (self.checkpoint / "trainer.pt").exists() and self.state_file.exists()
        self.state = TrainState.load(self.state_file) if self.resuming else TrainState()
        self.model = self.load_model()
        steps = self.steps_per_epoch() * loop.epochs
        head = [p for n, p in self.model.named_parameters() if self.is_head(n)]
        body = [p for n, p in self.model.named_parameters() if not self.is_head(n)]
        groups = [{"params": body, "lr": loop.lr}]
        if head:
            groups.append({"params": head, "lr": loop.head_lr})
        self.opt = torch.optim.AdamW(groups, weight_decay=loop.weight_decay)
        warm = max(1, int(loop.warmup * steps))
        self.sched = torch.optim.lr_scheduler.LambdaLR(
            self.opt, lambda s: min((s + 1) / warm, max(0.0, (steps - s) / max(1, steps - warm)))
        )
        if self.resuming:
            saved = torch.load(self.checkpoint / "trainer.pt", weights_only=False)
            self.opt.load_state_dict(saved["optimizer"])
            self.sched.load_state_dict(saved["scheduler"])
            log.info("resuming after epoch %d", len(self.state.epochs))

    # what a trainer defines
    @abstractmethod
    def load_model(self) -> Any:
        """The model to train: from :attr:`checkpoint` when :attr:`resuming`, else the base."""

    @abstractmethod
    def steps_per_epoch(self) -> int: ...

    @abstractmethod
    def batches(self, rng: random.Random) -> Sequence[Any]:
        """One epoch's batches (``rng`` is seeded by the epoch)."""

    @abstractmethod
    def batch_loss(self, batch: Any) -> Any:
        """The loss tensor of one batch."""

    @abstractmethod
    def evaluate(self) -> dict[str, float]:
        """Dev metrics; :attr:`select_metric` (higher is better) picks the best epoch."""

    def is_head(self, name: str) -> bool:
        """Parameters trained at the head learning rate (none by default)."""
        return False

    def save_model(self, path: Path) -> None:
        self.model.save_pretrained(str(path))

    # the loop
    def _save_checkpoint(self) -> None:
        tmp = self.work / "checkpoint.tmp"
        shutil.rmtree(tmp, ignore_errors=True)
        self.save_model(tmp)
        self.torch.save(
            {"optimizer": self.opt.state_dict(), "scheduler": self.sched.state_dict()},
            tmp / "trainer.pt",
        )
        shutil.rmtree(self.checkpoint, ignore_errors=True)
        tmp.rename(self.checkpoint)
        self.state_file.write_text(self.state.to_json() + "\n")

    def _run_epoch(self, epoch: int, deadline: float | None) -> EpochResult:
        torch = self.torch
        seed = self.loop.seed * 1000 + epoch
        torch.manual_seed(seed)
        batches = self.batches(random.Random(seed))
        self.model.train()
        t0, losses, partial = time.monotonic(), [], False
        for step, batch in enumerate(batches, start=1):
            loss = self.batch_loss(batch)
            self.opt.zero_grad()
            loss.backward()
            torch.nn.utils.clip_grad_norm_(self.model.parameters(), 1.0)
            self.opt.step()
            self.sched.step()
            losses.append(float(loss.detach()))
            if self.progress:
                self.progress(f"epoch {epoch}/{self.loop.epochs}", step, len(batches))
            if deadline is not None and time.monotonic() > deadline and step < len(batches):
                partial = True
                break
        dev = self.evaluate()
        return EpochResult(
            epoch, len(losses), float(np.mean(losses)), dev, time.monotonic() - t0, partial
        )

    def fit(self) -> TrainState:
        started = time.monotonic()
        deadline = None
        if self.loop.time_budget_minutes is not None:
            budget = self.loop.time_budget_minutes * 60 - self.state.seconds
            deadline = started + max(0.0, budget)
        for epoch in range(len(self.state.epochs) + 1, self.loop.epochs + 1):
            if deadline is not None and time.monotonic() > deadline:
                break
            result = self._run_epoch(epoch, deadline)
            self.state.epochs.append(result)
            best = self._best_score()
            if best is None or result.dev[self.select_metric] > best:
                self.state.best_epoch = epoch
                shutil.rmtree(self.best_dir, ignore_errors=True)
                self.save_model(self.best_dir)
            self.state.seconds += time.monotonic() - started
            started = time.monotonic()
            self._save_checkpoint()
            log.info("epoch %d: loss %.3f dev %s", epoch, result.mean_loss, result.dev)
            if result.partial:
                break
        return self.state

    def _best_score(self) -> float | None:
        done = [e for e in self.state.epochs[:-1] if e.epoch == self.state.best_epoch]
        return done[0].dev[self.select_metric] if done else None


def steps_for(n_examples: int, batch: int) -> int:
    return max(1, math.ceil(n_examples / batch))


def run_fit(
    trainer: Callable[..., EpochTrainer],
    cfg: Any,
    train: Sequence[Any],
    dev: Sequence[Any],
    texts: Any,
    work: Path,
    progress: Progress | None,
) -> TrainState:
    """Train (or resume) in ``work``; the best epoch's model is in ``work/best``."""
    from sciera.errors import ScieraError

    if not train:
        raise ScieraError("no training query has a positive passage and a negative")
    if not dev:
        raise ScieraError("the dev split is empty; use a dev fraction above 0")
    work.mkdir(parents=True, exist_ok=True)
    return trainer(cfg, train, dev, texts, work, progress).fit()
