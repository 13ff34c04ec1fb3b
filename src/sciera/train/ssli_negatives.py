"""SSLI hard negatives for training: an SSLI set built from training-side abstracts
(``sciera dataset build ... --exclude-ssli EVAL_SET --exclude-qrels TEST_QRELS``) gives,
per question, its gold passage and the distractors the LLM wrote to look relevant without
answering. Each such question becomes a training query whose groups always carry its
distractors as negatives (the rest are the first stage's hard negatives as usual).

The split guard decides what may enter: a set whose gold abstracts are excluded (an
evaluation SSLI set) or whose questions are evaluation queries is refused with the
instance named, not silently filtered, because passing an evaluation set here is a
mistake the user must see.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from sciera.train.splits import SplitGuard, SplitViolation


@dataclass
class SSLITraining:
    queries: dict[str, str] = field(default_factory=dict)
    qrels: dict[str, dict[str, int]] = field(default_factory=dict)
    hard: dict[str, tuple[str, ...]] = field(default_factory=dict)  # qid -> distractor ids
    texts: dict[str, str] = field(default_factory=dict)  # distractor id -> text
    sources: list[dict[str, Any]] = field(default_factory=list)


def load(paths: Sequence[str | Path], guard: SplitGuard) -> SSLITraining:
    """The SSLI-setting questions of ``paths`` that have at least one distractor."""
    from sciera.datasets.ssli.io import iter_jsonl, load_ssli
    from sciera.errors import ScieraError

    out = SSLITraining()
    for path in paths:
        source = _instances_path(path)
        # the guard first, on the raw records: a packed evaluation set is refused as such
        for _, rec in iter_jsonl(source):
            _check_gold(path, str(rec.get("id")), rec.get("gold_passage_ids") or [], guard)
        try:
            instances = load_ssli(source, "ssli")
        except ScieraError as exc:
            raise ScieraError(
                f"{exc} (a packed set holds no passage texts: `sciera dataset unpack` it first)"
            ) from None
        n_questions = n_distractors = 0
        for inst in instances:
            distractors = [c for c in inst.candidates if c.is_distractor]
            if not distractors:
                continue
            gold_docs = {pid.split("#", 1)[0] for pid in inst.gold_passage_ids}
            qid = "ssli:" + inst.id.removesuffix("/ssli")
            guard.check_query(qid, inst.question)
            out.queries[qid] = inst.question
            out.qrels[qid] = dict.fromkeys(sorted(gold_docs), 1)
            out.hard[qid] = tuple(c.passage_id for c in distractors)
            out.texts.update((c.passage_id, c.text) for c in distractors)
            n_questions += 1
            n_distractors += len(distractors)
        out.sources.append(
            {"path": str(path), "questions": n_questions, "distractors": n_distractors}
        )
    return out


def _check_gold(path: Any, instance: str, gold: Sequence[str], guard: SplitGuard) -> None:
    docs = {str(pid).split("#", 1)[0] for pid in gold}
    bad = sorted(docs - set(guard.allowed_docs(docs)))
    if bad:
        raise SplitViolation(
            f"{path}: instance {instance}: gold abstract {bad[0]} is excluded from training "
            "(an evaluation SSLI set?); build SSLI negatives from training-side abstracts only"
        )


def _instances_path(path: str | Path) -> Path:
    from sciera.datasets.ssli.io import INSTANCES_FILE

    path = Path(path)
    return path / INSTANCES_FILE if path.is_dir() else path
