"""The filter stage: which reranked passages are kept as evidence (DeepEra step 3).

A pure rule over the reranker's output: keep passages whose calibrated P(relevant) is at
least tau (when the ranking says its scores are calibrated), best first, at most top_k;
never a passage the reranker excluded (an unparseable judgment, an injection attempt).
"""

from sciera.filter.threshold import FilterDecision, ThresholdFilter, filter_evidence

__all__ = ["FilterDecision", "ThresholdFilter", "filter_evidence"]
