"""One evaluator object per task, shared by training (dev selection) and ``eval run``.

After sentence-transformers' ``SentenceEvaluator``: an evaluator holds the gold side of a
task and its metric specs; :meth:`score` scores predictions already made (what ``eval run``
aggregates from its logged records), and calling it with a model makes the predictions with
its ``predict`` function (supplied by the trainer, which knows how its model ranks or
verifies) and scores them. :attr:`primary_metric` (higher is better) is the one that picks
a training epoch.

- :class:`RankingEvaluator`: queries' judgments and query metric specs; a run
  (``{qid: {doc: score}}`` or ranked doc lists) is scored by
  :func:`sciera.eval.metrics.evaluate`, each metric on its own; a metric no query can be
  scored by (e.g. ``cdr`` without any (gold, distractor) pair) raises ``ValueError``, or
  is left out with ``skip_unscorable`` (``eval run``'s tables).
- :class:`ClaimEvaluator`: gold SciFact claims; claim predictions are scored with
  :func:`sciera.eval.metrics.scifact.scifact_counts` (every SciFact metric plus
  :data:`SCIFACT_MEAN`, or only the ``metrics`` specs when given).
"""

from __future__ import annotations

from collections.abc import Callable, Collection, Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any, Protocol

from sciera.eval.metrics.evaluate import evaluate, parse_metrics
from sciera.eval.metrics.scifact import scifact_counts

SCIFACT_MEAN = "scifact_mean_f1"  # mean of abstract label-only F1 and sentence label F1


class Evaluator(Protocol):
    """What training and ``eval run`` share: a primary metric, scoring of given
    predictions, and scoring of a model (its predictions made, then scored)."""

    primary_metric: str

    def __call__(self, model: Any) -> dict[str, float]: ...

    def score(self, predictions: Any) -> dict[str, float]: ...


def _predicted(evaluator: Any, model: Any) -> Any:
    if evaluator.predict is None:
        raise TypeError(f"{type(evaluator).__name__} has no predict function; use score()")
    return evaluator.predict(model)


@dataclass(frozen=True)
class RankingEvaluator:
    """Query metrics of a run against ``qrels`` (``{qid: {doc: grade}}``).

    ``distractors`` (per query) and ``n_candidates`` (one int or per query) are passed to
    :func:`~sciera.eval.metrics.evaluate` for the NRS, CDR and RP specs; ``predict(model)``
    returns the run a model makes on these queries; ``skip_unscorable`` leaves out a metric
    no query can be scored by instead of raising."""

    qrels: Mapping[str, Mapping[str, float]]
    metrics: tuple[str, ...] = ("ndcg@10", "hit@1")
    primary_metric: str = "ndcg@10"
    distractors: Mapping[str, Collection[str]] | None = None
    n_candidates: int | Mapping[str, int] | None = None
    predict: Callable[[Any], Mapping[str, Any]] | None = field(default=None, compare=False)
    skip_unscorable: bool = False

    def __post_init__(self) -> None:
        parse_metrics(self.metrics, "query")  # unknown or non-query specs fail here

    def score(self, predictions: Mapping[str, Any]) -> dict[str, float]:
        out: dict[str, float] = {}
        for spec in self.metrics:
            try:
                out |= evaluate(
                    predictions,
                    self.qrels,
                    [spec],
                    distractors=self.distractors,
                    n_candidates=self.n_candidates,
                )
            except ValueError:  # e.g. cdr without any (gold, distractor) pair
                if not self.skip_unscorable:
                    raise
        return out

    def __call__(self, model: Any) -> dict[str, float]:
        return self.score(_predicted(self, model))


@dataclass(frozen=True)
class ClaimEvaluator:
    """SciFact's claim-verification metrics over every ``gold`` claim (SciFact claim
    records or :class:`~sciera.eval.metrics.scifact.GoldClaim`); a claim without a
    prediction predicted nothing. ``metrics`` (verification specs) narrows the report;
    ``predict(model)`` returns a model's claim predictions."""

    gold: Sequence[Any]
    metrics: tuple[str, ...] | None = None
    primary_metric: str = SCIFACT_MEAN
    predict: Callable[[Any], Sequence[Any]] | None = field(default=None, compare=False)

    def __post_init__(self) -> None:
        if self.metrics is not None:
            parse_metrics(self.metrics, "verification")

    def score(self, predictions: Sequence[Any]) -> dict[str, float]:
        every = scifact_counts(self.gold, predictions).metrics()
        every[SCIFACT_MEAN] = (every["abstract_label_only_f1"] + every["sentence_label_f1"]) / 2
        if self.metrics is None:
            return every
        specs = parse_metrics(self.metrics, "verification")
        return {
            s.label: every[s.definition.pattern]
            if s.definition.pattern in every
            else s.definition.compute(self.gold, predictions)  # not from the counts
            for s in specs
        }

    def __call__(self, model: Any) -> dict[str, float]:
        return self.score(_predicted(self, model))


__all__ = ["SCIFACT_MEAN", "ClaimEvaluator", "Evaluator", "RankingEvaluator"]
