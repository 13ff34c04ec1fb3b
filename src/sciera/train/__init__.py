"""Trained relevance models: a cross-encoder reranker fine-tuned offline on in-domain
judgments with hard negatives mined by the first stage, under an enforced split discipline.

    from sciera.train import cross_encoder
    result = cross_encoder(corpus="corpora/scifact", queries="../shared/data/scifact",
                           qrels="../shared/data/scifact/qrels/train.tsv", out="my-ce")
    result.model_dir  # SCIERA_HOME/models/my-ce; --reranker cross_encoder --model my-ce

Heavy imports (torch, sentence-transformers) happen only when training runs.
"""

from __future__ import annotations

from pathlib import Path
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from sciera.settings import Settings
    from sciera.train.cross_encoder_run import TrainResult


def cross_encoder(
    *,
    corpus: str | Path,
    queries: str | Path,
    qrels: str | Path,
    out: str,
    settings: Settings | None = None,
    progress: Any = None,
    **options: Any,
) -> TrainResult:
    """Fine-tune a cross-encoder (see :mod:`sciera.train.ce_fit` for the recipe).

    ``options`` are :class:`~sciera.train.ce_fit.TrainConfig` fields (``epochs``, ``loss``,
    ``base``, ...) and :class:`~sciera.train.cross_encoder_run.CrossEncoderJob` fields
    (``depth``, ``dev_fraction``, ``exclude_qrels``, ``exclude_ssli``, ``fp16``, ...)."""
    from dataclasses import fields

    from sciera.train.ce_fit import TrainConfig
    from sciera.train.cross_encoder_run import CrossEncoderJob, train_cross_encoder

    names = {f.name for f in fields(TrainConfig)}
    config = TrainConfig(**{k: v for k, v in options.items() if k in names})
    job_opts = {k: v for k, v in options.items() if k not in names}
    job = CrossEncoderJob(corpus, queries, qrels, out, config=config, **job_opts)
    return train_cross_encoder(job, settings, progress, command="sciera.train.cross_encoder(...)")


__all__ = ["cross_encoder"]
