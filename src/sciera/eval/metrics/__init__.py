"""Evaluation metrics, one function per metric, addressed by string specs.

>>> evaluate({"q1": ["d3", "d1"]}, {"q1": {"d1": 1}}, ["mrr@10", "hit@1"])
{'mrr@10': 0.5, 'hit@1': 0.0}

Modules: :mod:`.ranking` (trec_eval-exact nDCG/MAP/MRR/Recall/Precision, HitRate,
RP), :mod:`.robustness` (NRS, CDR), :mod:`.generation` (EM, token P/R/F1,
ROUGE-L, ROUGE-SU4), :mod:`.bioasq` (BioASQ exact answers: yes/no accuracy and
corpus-level macro-F1, factoid strict/lenient/MRR, list P/R/F1), :mod:`.registry`
(spec parsing), :mod:`.scifact` (SciFact's claim-verification metrics: abstract-level
label-only and rationalized, sentence-level selection and selection+label) and
:mod:`.verdicts` (how often the verify stage decides a question's distractors and gold
passages) and :mod:`.evaluate` (whole runs; ``evaluate_labels`` for the corpus-level
``macro_f1`` spec, ``evaluate_verification`` for the SciFact specs, ``evaluate_verdicts``
for the verdict specs).
"""

from sciera.eval.metrics.bioasq import (
    factoid_lenient,
    factoid_mrr,
    factoid_strict,
    list_f1,
    list_precision,
    list_recall,
    list_scores,
    macro_f1,
    yesno_accuracy,
    yesno_macro_f1,
)
from sciera.eval.metrics.evaluate import (
    evaluate,
    evaluate_answers,
    evaluate_answers_per_query,
    evaluate_evidence,
    evaluate_labels,
    evaluate_per_query,
    evaluate_records,
    evaluate_records_per_query,
    evaluate_verdicts,
    evaluate_verdicts_per_query,
    evaluate_verification,
    ranked_list,
)
from sciera.eval.metrics.generation import (
    exact_match,
    rouge_l,
    rouge_su4,
    token_f1,
    token_precision,
    token_recall,
    token_scores,
)
from sciera.eval.metrics.ranking import (
    average_precision,
    hit_rate,
    ndcg,
    precision,
    recall,
    reciprocal_rank,
    relative_position,
    trec_order,
)
from sciera.eval.metrics.registry import METRICS, MetricDef, MetricSpec, parse_metric
from sciera.eval.metrics.robustness import context_discrimination_rate, noise_robustness
from sciera.eval.metrics.scifact import scifact_metrics

__all__ = [
    "METRICS",
    "MetricDef",
    "MetricSpec",
    "average_precision",
    "context_discrimination_rate",
    "evaluate",
    "evaluate_answers",
    "evaluate_answers_per_query",
    "evaluate_evidence",
    "evaluate_labels",
    "evaluate_per_query",
    "evaluate_records",
    "evaluate_records_per_query",
    "evaluate_verdicts",
    "evaluate_verdicts_per_query",
    "evaluate_verification",
    "exact_match",
    "factoid_lenient",
    "factoid_mrr",
    "factoid_strict",
    "hit_rate",
    "list_f1",
    "list_precision",
    "list_recall",
    "list_scores",
    "macro_f1",
    "ndcg",
    "noise_robustness",
    "parse_metric",
    "precision",
    "ranked_list",
    "recall",
    "reciprocal_rank",
    "relative_position",
    "rouge_l",
    "rouge_su4",
    "scifact_metrics",
    "token_f1",
    "token_precision",
    "token_recall",
    "token_scores",
    "trec_order",
    "yesno_accuracy",
    "yesno_macro_f1",
]
