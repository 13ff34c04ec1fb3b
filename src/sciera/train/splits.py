"""The split discipline every trainer goes through (SPEC "Training splits").

A trained model never sees a test-split query, nor any abstract behind an evaluation SSLI
question, and picks its epochs and calibration on a dev split of whole queries. A
:class:`SplitGuard` holds what is forbidden and raises on the first violation, so a
training set that breaks the rule is refused before any step runs; ``describe()`` is what
the model card records.

    guard = SplitGuard.for_training(train_qrels_path, exclude_qrels=[], exclude_ssli=[...])
    guard.query_problem(qid, text)     # "eval_query_text" etc., or None
    guard.check_query(qid, text)       # raises SplitViolation
    keep = guard.allowed_docs(doc_ids)  # forbidden abstracts left out
"""

from __future__ import annotations

import hashlib
import random
import re
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from sciera.datasets.ssli.io import ssli_gold_docs
from sciera.errors import ScieraError

# BEIR names its evaluation splits like this; a training qrels file beside one of them
# excludes that split's queries without being told.
EVAL_SPLITS = ("test.tsv",)


class SplitViolation(ScieraError):
    """A training query or abstract that belongs to an evaluation set."""


def _norm(text: str) -> str:
    return re.sub(r"\W+", " ", text.lower()).strip()


def _digest(items: Iterable[str]) -> str:
    return hashlib.sha256("\n".join(sorted(items)).encode()).hexdigest()[:16]


@dataclass
class SplitGuard:
    """Forbidden query ids and texts (evaluation queries) and forbidden document ids
    (abstracts behind evaluation SSLI questions), each with where it came from."""

    query_ids: set[str] = field(default_factory=set)
    query_texts: set[str] = field(default_factory=set)
    doc_ids: set[str] = field(default_factory=set)
    sources: list[dict[str, Any]] = field(default_factory=list)
    # gold documents of the excluded queries: allowed in training pairs (the corpus is
    # shared, as in BEIR), never a source of synthetic queries
    judged_docs: set[str] = field(default_factory=set)

    def exclude_qrels(self, path: str | Path, queries: Mapping[str, str] | None = None) -> None:
        """Forbid every query judged in ``path`` (and its text, when ``queries`` has it)."""
        from sciera.corpus import load_qrels, relevant_docs

        qrels = load_qrels(path)
        qids = set(qrels)
        self.query_ids |= qids
        self.judged_docs |= relevant_docs(qrels)
        if queries is not None:
            self.query_texts |= {_norm(queries[q]) for q in qids if q in queries}
        self.sources.append(
            {"kind": "qrels", "path": str(path), "queries": len(qids), "sha": _digest(qids)}
        )

    def exclude_ssli(self, path: str | Path) -> None:
        docs = ssli_gold_docs(path)
        self.doc_ids |= docs
        self.sources.append(
            {"kind": "ssli", "path": str(path), "abstracts": len(docs), "sha": _digest(docs)}
        )

    @classmethod
    def for_training(
        cls,
        train_qrels: str | Path,
        queries: Mapping[str, str] | None = None,
        *,
        exclude_qrels: Sequence[str | Path] = (),
        exclude_ssli: Sequence[str | Path] = (),
    ) -> SplitGuard:
        """The guard for training on ``train_qrels``: the evaluation splits beside it
        (BEIR ``qrels/test.tsv``) are excluded automatically, plus what is named."""
        guard = cls()
        train = Path(train_qrels).resolve()
        auto = [train.parent / name for name in EVAL_SPLITS if (train.parent / name) != train]
        for path in [*(p for p in auto if p.is_file()), *map(Path, exclude_qrels)]:
            if path.resolve() == train:
                raise SplitViolation(f"{path}: the training qrels cannot also be excluded")
            guard.exclude_qrels(path, queries)
        for path in exclude_ssli:
            guard.exclude_ssli(path)
        return guard

    def query_problem(self, qid: str, text: str) -> str | None:
        """Why ``qid`` may not be trained on (``None`` when it may)."""
        if qid in self.query_ids:
            return "eval_query_id"
        if _norm(text) in self.query_texts:
            return "eval_query_text"
        return None

    def check_query(self, qid: str, text: str) -> None:
        if qid in self.query_ids:
            raise SplitViolation(
                f"query {qid!r} is in an evaluation split; it cannot be trained on"
            )
        if _norm(text) in self.query_texts:
            raise SplitViolation(
                f"query {qid!r} has the text of an evaluation query; it cannot be trained on"
            )

    def allowed_docs(self, doc_ids: Iterable[str]) -> list[str]:
        return [d for d in doc_ids if d not in self.doc_ids]

    def check_docs(self, doc_ids: Iterable[str]) -> None:
        bad = sorted(set(doc_ids) & self.doc_ids)
        if bad:
            raise SplitViolation(
                f"{len(bad)} abstract(s) behind evaluation SSLI questions in the training data "
                f"(e.g. {bad[0]!r})"
            )

    def describe(self) -> dict[str, Any]:
        return {
            "excluded": list(self.sources),
            "excluded_queries": len(self.query_ids),
            "excluded_abstracts": len(self.doc_ids),
        }


def dev_split(qids: Iterable[str], fraction: float, seed: int) -> tuple[list[str], list[str]]:
    """(train, dev) over whole queries: sorted, shuffled with ``seed``, the first
    ``round(fraction * n)`` (at least 1 when ``fraction`` > 0) go to dev."""
    if not 0.0 <= fraction < 1.0:
        raise ValueError(f"dev fraction must be in [0, 1), got {fraction}")
    pool = sorted(set(qids))
    random.Random(seed).shuffle(pool)
    n_dev = max(1, round(fraction * len(pool))) if fraction > 0 and len(pool) > 1 else 0
    return sorted(pool[n_dev:]), sorted(pool[:n_dev])
