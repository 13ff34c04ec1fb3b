"""Fine-tune the verifier: one encoder, a rationale head and a verdict head, trained together.

Recipe (every choice is in :class:`VerifierConfig` and the model card):

* Start from the shipped relevance cross-encoder ``scifact-minilm`` (default; its one
  relevance logit starts the rationale head), the offline all-MiniLM-L6-v2 (``minilm``), the
  offline multilingual-e5-small (``e5``, ``e5-enpt``) or a folder. The network is a sequence
  classifier with four outputs: 0 = rationale, 1-3 = SUPPORT / CONTRADICT / NOT ENOUGH INFO.
* Each epoch mixes rationale batches and verdict batches in a seeded random order. Rationale
  batches: every gold rationale sentence of the training claims, and per abstract the
  ``hard_negatives`` other sentences the zero-shot scorer ranks highest plus
  ``random_negatives`` random ones (evidence abstracts, cited abstracts without evidence,
  retrieved abstracts), binary cross-entropy (positives weighted ``rationale_pos_weight``).
  Verdict batches: every verdict example (gold and noisy rationales, NOT ENOUGH INFO from
  cited, retrieved and SSLI distractor abstracts, PubMedQA), cross-entropy with class weights
  inverse to the label counts.
* After every epoch the dev claims are verified against their cited abstracts through the
  inference code (:func:`sciera.verify.verify_abstracts`, the policy's defaults, no
  calibration yet) and scored with SciFact's metrics; the epoch with the best mean of
  abstract label-only F1 and sentence selection+label F1 is kept.
"""

from __future__ import annotations

import random
from collections import Counter, defaultdict
from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import numpy as np

from sciera.embed.plain import encode_pairs
from sciera.errors import ScieraError, require
from sciera.train.loop import EpochTrainer, LoopConfig, Progress, TrainState, steps_for
from sciera.train.verifier_data import SentenceExample, VerdictExample, VerifierData
from sciera.train.verifier_eval import SELECT, VerifierEvaluator
from sciera.verify.inputs import CONTEXTS, sentence_pair, verdict_pair
from sciera.verify.network import NUM_LABELS, RATIONALE, VERDICT, VerifierNetwork

BASES = ("scifact-minilm", "minilm", "e5", "e5-enpt")


@dataclass(frozen=True)
class VerifierConfig:
    """Hyperparameters of one verifier run (all recorded in the model card)."""

    base: str = "scifact-minilm"
    epochs: int = 4
    lr: float = 3e-5
    head_lr: float = 5e-4
    warmup: float = 0.1
    weight_decay: float = 0.01
    seed: int = 0
    time_budget_minutes: float | None = None
    context: str = "title"
    max_length_rationale: int = 128
    max_length_verdict: int = 256
    rationale_batch: int = 32
    verdict_batch: int = 16
    hard_negatives: int = 2
    random_negatives: int = 1
    rationale_pos_weight: float = 2.0
    verdict_weight: float = 1.0
    class_weights: bool = True

    def __post_init__(self) -> None:
        if self.context not in CONTEXTS:
            raise ValueError(f"context must be one of {', '.join(CONTEXTS)}, got {self.context!r}")
        if self.epochs < 1 or self.rationale_batch < 1 or self.verdict_batch < 1:
            raise ValueError("epochs and batch sizes must be at least 1")

    @property
    def inputs(self) -> dict[str, Any]:
        return {
            "context": self.context,
            "max_length_rationale": self.max_length_rationale,
            "max_length_verdict": self.max_length_verdict,
        }


def resolve_verifier_base(base: str, home: Path | None = None) -> str:
    """``scifact-minilm`` -> the shipped relevance cross-encoder; ``minilm`` / ``e5`` /
    ``e5-enpt`` -> the offline starts of :func:`sciera.train.ce_fit.resolve_base`; else a
    folder."""
    if base == "scifact-minilm":
        from sciera.artifacts.registry import CROSS_ENCODER, resolve

        return resolve(CROSS_ENCODER, base)
    from sciera.train.ce_fit import resolve_base

    return resolve_base(base, home)


def load_for_training(path: str) -> tuple[Any, Any]:
    """(model with four outputs in float32, tokenizer) from ``path``. A one-output
    classifier there (a relevance cross-encoder) starts the rationale output."""
    transformers = require("transformers", "dense")
    import torch

    tok = transformers.AutoTokenizer.from_pretrained(path)
    config = transformers.AutoConfig.from_pretrained(path)
    old_labels = getattr(config, "num_labels", None)
    model = transformers.AutoModelForSequenceClassification.from_pretrained(
        path, num_labels=NUM_LABELS, ignore_mismatched_sizes=True, dtype=torch.float32
    )
    model.float()
    if old_labels == 1 and "ForSequenceClassification" in str(config.architectures):
        old = transformers.AutoModelForSequenceClassification.from_pretrained(
            path, dtype=torch.float32
        )
        with torch.no_grad():
            model.classifier.weight[RATIONALE] = old.classifier.weight[0].float()
            model.classifier.bias[RATIONALE] = old.classifier.bias[0].float()
        del old
    model.config.id2label = {0: "RATIONALE", 1: "SUPPORT", 2: "CONTRADICT", 3: "NOT ENOUGH INFO"}
    model.config.label2id = {v: k for k, v in model.config.id2label.items()}
    return model, tok


def class_weights(labels: Sequence[int]) -> list[float]:
    """Inverse label frequency, normalized to mean 1 over the examples."""
    counts = Counter(labels)
    n, k = len(labels), 3
    return [n / (k * counts[c]) if counts[c] else 0.0 for c in range(k)]


def sample_sentences(
    examples: Sequence[SentenceExample], hard: int, rand: int, rng: random.Random
) -> list[SentenceExample]:
    """Every positive; per (claim, abstract) the ``hard`` highest-scored negatives and
    ``rand`` random others."""
    by_abstract: dict[tuple[str, str], list[SentenceExample]] = defaultdict(list)
    for e in examples:
        by_abstract[(e.claim_id, e.doc_id)].append(e)
    out: list[SentenceExample] = []
    for key in sorted(by_abstract):
        group = by_abstract[key]
        out += [e for e in group if e.label]
        negs = sorted((e for e in group if not e.label), key=lambda e: (-e.hardness, e.index))
        out += negs[:hard]
        rest = negs[hard:]
        out += rng.sample(rest, min(rand, len(rest)))
    return out


class VerifierTrainer(EpochTrainer):
    select_metric = SELECT

    def __init__(
        self,
        cfg: VerifierConfig,
        data: VerifierData,
        base_path: str,
        work: Path,
        progress: Progress | None,
    ) -> None:
        import torch

        self.cfg, self.data, self.base_path = cfg, data, base_path
        self.evaluator = VerifierEvaluator(data, tuple(data.dev_ids))  # picks the epoch
        self.select_metric = self.evaluator.primary_metric
        self.claim_text = {cid: c.claim for cid, c in data.claims.items()}
        self.verdicts = list(data.verdict_examples)
        labels = [e.label for e in self.verdicts]
        weights = class_weights(labels) if cfg.class_weights else [1.0, 1.0, 1.0]
        self.class_weight = torch.tensor(weights, dtype=torch.float32)
        self.n_sentences = len(
            sample_sentences(
                data.sentence_examples, cfg.hard_negatives, cfg.random_negatives, random.Random(0)
            )
        )
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

    def load_model(self) -> Any:
        path = str(self.checkpoint) if self.resuming else self.base_path
        model, self.tokenizer = load_for_training(path)
        return model

    def save_model(self, path: Path) -> None:
        self.model.save_pretrained(str(path))
        self.tokenizer.save_pretrained(str(path))

    def is_head(self, name: str) -> bool:
        return name.startswith("classifier")

    def steps_per_epoch(self) -> int:
        return steps_for(self.n_sentences, self.cfg.rationale_batch) + steps_for(
            len(self.verdicts), self.cfg.verdict_batch
        )

    def batches(self, rng: random.Random) -> list[tuple[str, list[Any]]]:
        cfg = self.cfg
        sents = sample_sentences(
            self.data.sentence_examples, cfg.hard_negatives, cfg.random_negatives, rng
        )
        rng.shuffle(sents)
        verdicts = list(self.verdicts)
        rng.shuffle(verdicts)
        out: list[tuple[str, list[Any]]] = [
            ("rationale", sents[i : i + cfg.rationale_batch])
            for i in range(0, len(sents), cfg.rationale_batch)
        ]
        out += [
            ("verdict", verdicts[i : i + cfg.verdict_batch])
            for i in range(0, len(verdicts), cfg.verdict_batch)
        ]
        rng.shuffle(out)
        return out

    def batch_loss(self, batch: tuple[str, list[Any]]) -> Any:
        import torch

        kind, items = batch
        sep = self.tokenizer.sep_token or "[SEP]"
        if kind == "rationale":
            pairs = []
            for e in items:
                a = self.data.abstracts[e.doc_id]
                pairs.append(
                    sentence_pair(
                        self.claim_text[e.claim_id],
                        a.sentences,
                        e.index,
                        a.title,
                        context=self.cfg.context,
                        sep=sep,
                    )
                )
            tokens = encode_pairs(self.tokenizer, pairs, self.cfg.max_length_rationale)
            logits = self.model(**tokens).logits[:, RATIONALE]
            y = torch.tensor([float(e.label) for e in items])
            pos = torch.tensor(self.cfg.rationale_pos_weight)
            return torch.nn.functional.binary_cross_entropy_with_logits(logits, y, pos_weight=pos)
        pairs = [verdict_pair(e.claim, e.sentences, e.title, sep=sep) for e in items]
        tokens = encode_pairs(self.tokenizer, pairs, self.cfg.max_length_verdict)
        logits = self.model(**tokens).logits[:, VERDICT]
        y = torch.tensor([e.label for e in items])
        loss = torch.nn.functional.cross_entropy(logits, y, weight=self.class_weight)
        return loss * self.cfg.verdict_weight

    def network(self) -> VerifierNetwork:
        return VerifierNetwork(self.model, self.tokenizer, self.cfg.inputs)

    def evaluate(self) -> dict[str, float]:
        return self.evaluator(self.network())


def fit_verifier(
    cfg: VerifierConfig, data: VerifierData, work: Path, progress: Progress | None
) -> TrainState:
    """Train (or resume) in ``work``; the best epoch's model is in ``work/best``."""
    if not data.sentence_examples or not data.verdict_examples:
        raise ScieraError("no training example: check the claims and sentence files")
    if not data.dev_ids:
        raise ScieraError("the dev split is empty; use a dev fraction above 0")
    work.mkdir(parents=True, exist_ok=True)
    base = resolve_verifier_base(cfg.base)
    return VerifierTrainer(cfg, data, base, work, progress).fit()


def label_counts(examples: Sequence[VerdictExample]) -> dict[str, int]:
    names = ("SUPPORT", "CONTRADICT", "NOT ENOUGH INFO")
    c = Counter(e.label for e in examples)
    return {names[k]: c[k] for k in range(3)}


def as_array(rows: Sequence[Sequence[float]]) -> np.ndarray:
    return np.asarray(rows, dtype=float).reshape(-1, 3)
