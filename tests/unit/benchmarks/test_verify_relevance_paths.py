"""verify_relevance_paths.py: the per-path summary of what the verify stage reads (no model
run: hand-made reads)."""

from __future__ import annotations

import math

SCRIPT = "verify_relevance_paths"


def test_auc_counts_ties_half_and_is_undefined_without_both_sides(bench):
    assert bench.auc([0.9, 0.5], [0.5, 0.1]) == (1 + 1 + 0.5 + 1) / 4
    assert math.isnan(bench.auc([], [0.3])) and math.isnan(bench.auc([0.3], []))


def test_summary_counts_gold_read_and_gold_above_each_threshold(bench):
    gold = {"1": {"a", "z"}, "2": {"c"}}
    read = {"1": [("a", 0.8), ("b", 0.6)], "2": [("d", 0.4), ("c", 0.35)]}
    s = bench.summarize(read, gold)
    assert s["gold_abstracts"] == 3 and s["gold_read"] == 2  # "z" is never read
    assert s["auc_gold_vs_other_read"] == 0.5  # 0.8 beats both others, 0.35 neither
    assert s["gold_at_least"] == {"0.3": 2, "0.45": 1, "0.5": 1, "0.7": 1}
    assert s["other_at_least"] == {"0.3": 2, "0.45": 1, "0.5": 1, "0.7": 0}
