"""``sciera train embedder``: from a corpus and training judgments to an embedder folder
that ``sciera index --embedder sentence-transformers --model NAME`` re-embeds a corpus with.

Same data path and split discipline as the cross-encoder (:mod:`sciera.train.prepare`);
work files live in ``<model dir>.work/`` until the model is written, so rerunning the same
command resumes.
"""

from __future__ import annotations

import time
from collections.abc import Callable
from dataclasses import asdict, dataclass, field
from pathlib import Path

from sciera.errors import ScieraError
from sciera.settings import Settings, load_settings
from sciera.train.ce_fit import first_stage_scores, ranking_metrics, resolve_base
from sciera.train.cross_encoder_run import TrainResult
from sciera.train.embedder_fit import EmbedderConfig, dev_scores, fit, load_embedder, with_missed
from sciera.train.prepare import DataSpec, base_card, install, open_work, prepare, run_key

Progress = Callable[[str, int, int], None]


@dataclass(frozen=True)
class EmbedderJob:
    """Everything ``sciera train embedder`` takes."""

    data: DataSpec
    out: str
    config: EmbedderConfig = field(default_factory=EmbedderConfig)
    fp16: bool = True
    overwrite: bool = False


def train_embedder(
    job: EmbedderJob,
    settings: Settings | None = None,
    progress: Progress | None = None,
    command: str | None = None,
) -> TrainResult:
    settings = settings or load_settings()
    cfg = job.config
    spec = job.data
    key = run_key(asdict(cfg), spec)
    model_dir, work = open_work(job.out, settings, job.overwrite, key)
    started = time.monotonic()
    data = prepare(spec, settings, work, progress)
    state = fit(cfg, data.train, data.dev, data.texts, work, progress)
    if state.best_epoch is None:
        raise ScieraError("training ended before one epoch was evaluated; raise the time budget")
    dev = with_missed(data.dev)
    base = load_embedder(resolve_base(cfg.base), max_length=cfg.max_length)
    modes = {
        "first_stage": ranking_metrics(dev, first_stage_scores(dev)),
        "base": ranking_metrics(dev, dev_scores(base, dev, data.texts)),
    }
    # the best epoch's dev metrics were measured by the loop on these same records
    modes["trained"] = next(e.dev for e in state.epochs if e.epoch == state.best_epoch)
    model = load_embedder(str(work / "best"), max_length=cfg.max_length)
    card = base_card(
        name=model_dir.name,
        kind="dense retrieval embedder",
        base=cfg.base,
        command=command,
        config={**asdict(cfg), "fp16": job.fp16},
        spec=spec,
        data=data,
        state=state,
        started=started,
    )
    card.update(
        {
            "dev": {
                "modes": modes,
                "note": "cosine ranking of the first stage's candidates plus missed gold",
            },
            "max_length": cfg.max_length,
            "dim": int(model.get_embedding_dimension()),
        }
    )

    def save(tmp: Path) -> None:
        if job.fp16:
            model.half()  # loaders compute in float32 (SentenceTransformerEmbedder)
        model.save_pretrained(str(tmp), create_model_card=False)

    install(model_dir, work, card, save)
    return TrainResult(model_dir, card)
