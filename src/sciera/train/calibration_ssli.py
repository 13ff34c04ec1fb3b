"""Calibration-side SSLI questions: distractors met in a corpus join the fused calibrator's
fit (``sciera train recalibrate NAME --calibration-ssli SET``).

A cross-encoder's ``fused`` calibrator weighs its logit against the first stage's score and
rank with weights fitted on dev claims, where no distractor sits in the corpus: it learns
to trust the first stage, which SSLI distractors in a corpus win. This module turns an SSLI
set built on *calibration-side* abstracts (``sciera dataset build ... --exclude-ssli
EVAL_AND_TRAINING_SETS --exclude-qrels TEST_AND_TRAIN_QRELS``) into calibration rows as a
user meets them: its distractors are injected into a copy of the model's corpus
(:func:`sciera.datasets.ssli.inject.inject`, once per corpus and sets, indexed like any
corpus), and each question with a distractor gets the first stage's top ``depth``
documents over that copy as candidates, exactly like a dev claim.

A question is refused, never calibrated on, when its gold abstract is one the model trained
on (training labels, synthetic-query sources, SSLI-negative sources), a dev or calibration
question's gold, an abstract behind an evaluation SSLI question, or a document judged by an
evaluation's qrels (the card's split guard). The rows join the fit of the fused weights,
repeated ``weight`` times; the probabilities are then rescaled on the dev claims and
calibration questions as before (:func:`sciera.train.cross_encoder_run.calibrate_on_dev`).
"""

from __future__ import annotations

import hashlib
from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING, Any

from sciera.errors import ScieraError

if TYPE_CHECKING:
    from sciera.settings import Settings
    from sciera.train.data import TrainQuery
    from sciera.train.prepare import DataSpec, Prepared, Progress

DEFAULT_WEIGHT = 10
MINED = "ssli_mined.jsonl"
SCORING = "scoring calibration SSLI questions"


@dataclass(frozen=True)
class SsliRows:
    """The usable questions as dev-like records, their passages' texts, and what the card
    records about them (sets, injected corpus, refused and skipped questions)."""

    records: list[TrainQuery]
    texts: dict[str, str]
    card: dict[str, Any]


def injected_dir(work: Path, corpus: str | Path, sets: Sequence[str | Path]) -> Path:
    """``work/ssli-corpus-<key>``: one injected copy per corpus store and set files."""
    h = hashlib.sha256(str(Path(corpus).resolve()).encode())
    for path in sets:
        h.update(hashlib.sha256(Path(path).read_bytes()).digest())
    return work / f"ssli-corpus-{h.hexdigest()[:12]}"


def seen_docs(data: Prepared, card: dict[str, Any]) -> set[str]:
    """Abstracts no calibration SSLI question may have as its gold: what the model trained
    on, dev and calibration golds, the guard's forbidden and evaluation-judged ones."""
    from sciera.train.lineage import trained_beyond_labels

    seen = set(trained_beyond_labels([card], data))
    seen |= {p.split("#", 1)[0] for r in data.train for p in r.positives}
    seen |= {d for r in (*data.dev, *data.calibration) for d in r.gold_docs}
    return seen | data.guard.doc_ids | data.guard.judged_docs


def prepare_ssli(
    sets: Sequence[str | Path],
    spec: DataSpec,
    data: Prepared,
    card: dict[str, Any],
    settings: Settings,
    work: Path,
    progress: Progress | None = None,
) -> SsliRows:
    """The calibration rows of the SSLI ``sets`` for the model whose rebuilt data is
    ``data`` (``card``'s): inject, index, refuse seen golds, mine the first stage."""
    from sciera.corpus import PassageStore
    from sciera.datasets.ssli.inject import inject, questions
    from sciera.datasets.ssli.io import load_ssli
    from sciera.retrieve.build import ensure_indexes
    from sciera.train.data import build_queries, mine_candidates, passage_texts

    queries: dict[str, str] = {}
    qrels: dict[str, dict[str, int]] = {}
    owner: dict[str, str] = {}
    for path in sets:
        qs = questions(load_ssli(path))
        if not qs.queries:
            raise ScieraError(f"{path}: no SSLI-setting question with a distractor")
        for qid in qs.queries:
            if qid in owner:
                raise ScieraError(
                    f"{path}: question {qid} is also in {owner[qid]}; give sets with distinct "
                    "question ids"
                )
            owner[qid] = str(path)
        queries |= qs.queries
        qrels |= qs.qrels
    out = injected_dir(work, spec.corpus, sets)
    distractors = sum(inject(path, spec.corpus, out).distractors for path in sets)
    ensure_indexes(
        out,
        spec.retriever,
        settings,
        (lambda task, done, total: progress(f"indexing the SSLI copy ({task})", done, total))
        if progress
        else None,
    )
    seen = seen_docs(data, card)
    refused = sorted(q for q in qrels if set(qrels[q]) & seen)
    usable = {q: v for q, v in qrels.items() if q not in refused}
    mined = mine_candidates(
        out,
        {q: queries[q] for q in usable},
        settings=settings,
        retriever=spec.retriever,
        depth=spec.depth,
        cache=out / MINED,
        progress=progress,
    )
    with PassageStore.open(out) as store:
        records, skipped = build_queries(store, queries, usable, mined, data.guard)
        texts = passage_texts(store, records)
        fingerprint = store.fingerprint()
    if not records:
        raise ScieraError(
            f"no usable calibration SSLI question in {', '.join(map(str, sets))} "
            f"({len(refused)} refused: their gold abstracts are ones {card['name']} trained "
            "on, calibrates with or is evaluated on)"
        )
    return SsliRows(
        records,
        texts,
        {
            "sets": [str(p) for p in sets],
            "corpus": str(out),
            "store_fingerprint": fingerprint,
            "questions": len(queries),
            "distractors": distractors,
            "used": len(records),
            "refused_seen_gold": refused,
            "skipped": {k: v for k, v in skipped.items() if v},
            "candidates": f"{spec.retriever} top-{spec.depth} documents over the injected copy",
        },
    )


def distractor_stats(records: Sequence[TrainQuery], scores: Sequence[Any]) -> dict[str, float]:
    """Over ``records``: hit@1 and the share of questions whose top candidate by ``scores``
    is an injected distractor."""
    from sciera.datasets.ssli.inject import is_distractor

    hits = firsts = 0
    for rec, s in zip(records, scores, strict=True):
        top = max(range(len(rec.candidates)), key=lambda i: (float(s[i]), -i))
        doc = rec.candidates[top][0].split("#", 1)[0]
        hits += doc in rec.gold_docs
        firsts += is_distractor(doc)
    n = max(len(records), 1)
    return {"hit@1": hits / n, "distractor_first": firsts / n, "queries": float(len(records))}
