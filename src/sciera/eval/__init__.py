"""Evaluation of every stage: metrics (ranking, robustness, generation) and retrieval runs.

The metric library lives in :mod:`sciera.eval.metrics`; :mod:`sciera.eval.retrieval`
runs a retriever over a query set and scores it against relevance judgments.
"""

from sciera.eval.metrics import (
    METRICS,
    evaluate,
    evaluate_answers,
    evaluate_evidence,
    evaluate_per_query,
    parse_metric,
)

__all__ = [
    "METRICS",
    "evaluate",
    "evaluate_answers",
    "evaluate_evidence",
    "evaluate_per_query",
    "parse_metric",
]
