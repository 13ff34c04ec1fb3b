"""Trained relevance models: a cross-encoder reranker and a dense-retrieval embedder
fine-tuned offline on in-domain judgments (optionally with LLM-written synthetic queries)
with hard negatives mined by the first stage, under an enforced split discipline.

    from sciera.train import cross_encoder, embedder
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


def _split(config_cls: type, options: dict[str, Any], **data: Any) -> tuple[Any, Any, dict]:
    """(config, data spec, remaining job options) from keyword ``options``; ``seed`` seeds
    both the training and the dev split."""
    from dataclasses import fields

    from sciera.train.prepare import DataSpec

    config_names = {f.name for f in fields(config_cls)}
    data_names = {f.name for f in fields(DataSpec)}
    config = config_cls(**{k: v for k, v in options.items() if k in config_names})
    spec = DataSpec(**data, **{k: v for k, v in options.items() if k in data_names})
    rest = {k: v for k, v in options.items() if k not in config_names | data_names}
    return config, spec, rest


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
    ``base``, ...), :class:`~sciera.train.prepare.DataSpec` fields (``depth``,
    ``dev_fraction``, ``exclude_qrels``, ``exclude_ssli``, ``synthetic``, ...) and ``fp16``,
    ``overwrite``."""
    from sciera.train.ce_fit import TrainConfig
    from sciera.train.cross_encoder_run import CrossEncoderJob, train_cross_encoder

    config, spec, rest = _split(TrainConfig, options, corpus=corpus, queries=queries, qrels=qrels)
    job = CrossEncoderJob(spec, out, config, **rest)
    return train_cross_encoder(job, settings, progress, command="sciera.train.cross_encoder(...)")


def embedder(
    *,
    corpus: str | Path,
    queries: str | Path,
    qrels: str | Path,
    out: str,
    settings: Settings | None = None,
    progress: Any = None,
    **options: Any,
) -> TrainResult:
    """Fine-tune the dense retriever's embedder (see :mod:`sciera.train.embedder_fit`);
    ``options`` as for :func:`cross_encoder`, with
    :class:`~sciera.train.embedder_fit.EmbedderConfig` fields."""
    from sciera.errors import ScieraError
    from sciera.train.embedder_fit import EmbedderConfig
    from sciera.train.embedder_run import EmbedderJob, train_embedder

    if options.get("calibration_questions"):
        raise ScieraError("calibration_questions calibrate a cross-encoder; an embedder has none")
    config, spec, rest = _split(
        EmbedderConfig, options, corpus=corpus, queries=queries, qrels=qrels
    )
    job = EmbedderJob(spec, out, config, **rest)
    return train_embedder(job, settings, progress, command="sciera.train.embedder(...)")


__all__ = ["cross_encoder", "embedder"]
