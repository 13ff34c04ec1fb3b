"""Whole-run evaluation, spec parsing and the registry."""

from __future__ import annotations

import doctest

import pytest

import sciera.eval.metrics as metrics_pkg
from sciera.eval.metrics import (
    METRICS,
    evaluate,
    evaluate_answers,
    evaluate_answers_per_query,
    evaluate_evidence,
    evaluate_per_query,
    parse_metric,
)

QRELS = {"q1": {"a": 1, "b": 2}, "q2": {"c": 1}}


def test_mean_counts_missing_queries_as_zero_and_ignores_unjudged():
    run = {"q1": ["x", "a"], "q9": ["c"]}  # q2 missing; q9 not judged
    # q1: MRR 1/2, q2: 0 -> mean 1/4; R@2: q1 1/2 (a of a, b), q2 0 -> 1/4
    assert evaluate(run, QRELS, ["mrr@10", "recall@2"]) == pytest.approx(
        {"mrr@10": 0.25, "recall@2": 0.25}
    )
    per_query = evaluate_per_query(run, QRELS, ["mrr@10"])
    assert per_query == {"q1": {"mrr@10": 0.5}, "q2": {"mrr@10": 0.0}}


def test_query_with_only_grade_zero_judgments_counts_as_zero():
    qrels = {"q1": {"a": 1}, "q2": {"b": 0}}
    run = {"q1": ["a"], "q2": ["b"]}
    assert evaluate(run, qrels, "ndcg@10") == {"ndcg@10": 0.5}  # (1 + 0) / 2


def test_score_runs_are_ordered_like_trec_eval():
    # tie at 1.0: doc id descending puts "b" before "a"
    run = {"q1": {"a": 1.0, "b": 1.0}}
    assert evaluate(run, {"q1": {"a": 1}}, ["mrr"]) == {"mrr": 0.5}
    # ndcg with graded gains [2 at rank 1, 1 at rank 2] = ideal -> 1
    run = {"q1": {"a": 0.5, "b": 0.9}, "q2": {"c": 3.0}}
    assert evaluate(run, QRELS, ["ndcg@10", "precision@2"]) == pytest.approx(
        {"ndcg@10": 1.0, "precision@2": (1.0 + 0.5) / 2}
    )


def test_bad_runs_and_specs_raise():
    with pytest.raises(ValueError, match="more than once"):
        evaluate({"q1": ["a", "x", "a"]}, QRELS, ["mrr"])
    with pytest.raises(TypeError):
        evaluate({"q1": "a"}, QRELS, ["mrr"])  # type: ignore[dict-item]
    with pytest.raises(ValueError, match=r"unknown metric 'ndgc@10'; valid metrics: .*ndcg@K"):
        evaluate({}, QRELS, ["ndgc@10"])
    with pytest.raises(ValueError, match="bad cutoff"):
        parse_metric("ndcg@0")
    with pytest.raises(ValueError, match="bad cutoff"):
        parse_metric("ndcg@ten")
    with pytest.raises(ValueError, match="unknown metric"):
        parse_metric("hit")  # hit needs a K
    with pytest.raises(ValueError, match=r"f1 is an answer metric; use evaluate_answers\(\)"):
        evaluate({}, QRELS, ["f1"])
    with pytest.raises(ValueError, match="no query"):
        evaluate({}, {}, ["mrr"])


def test_spec_parsing_distinguishes_ranking_and_token_precision():
    assert parse_metric("precision@5").definition is METRICS["precision@k"]
    assert parse_metric("precision@5").k == 5
    assert parse_metric("precision").definition.kind == "answer"
    assert parse_metric(" NDCG@10 ").label == "ndcg@10"
    assert parse_metric("nrs").k == 5


def test_relative_position_needs_n():
    run = {"q1": ["x", "a"], "q2": ["c"]}
    # rp@30: q1 gold at rank 2 -> 100 * 28/29; q2 at rank 1 -> 100
    assert evaluate(run, QRELS, ["rp@30"])["rp@30"] == pytest.approx((100 * 28 / 29 + 100) / 2)
    per_q = evaluate(run, QRELS, ["rp"], n_candidates={"q1": 2, "q2": 5})
    assert per_q["rp"] == pytest.approx((0.0 + 100.0) / 2)  # q1: rank 2 of N = 2 -> 0
    with pytest.raises(ValueError, match="rp needs"):
        evaluate(run, QRELS, ["rp"])


def test_nrs_and_pooled_cdr():
    qrels = {"q1": {"g1": 1}, "q2": {"g2": 1}, "q3": {"g3": 1}}
    distractors = {"q1": {"d1", "d2"}, "q2": {"d3"}}  # q3 has none
    run = {"q1": ["g1", "d1", "d2"], "q2": ["d3", "g2"], "q3": ["g3"]}
    # NRS@2: q1 1/2, q2 1/2, q3 1/1 -> 2/3
    # CDR pooled: q1 wins 2 of 2, q2 wins 0 of 1, q3 no pairs -> 2/3 (not the 1/2 mean)
    assert evaluate(run, qrels, ["nrs@2", "cdr"], distractors=distractors) == pytest.approx(
        {"nrs@2": 2 / 3, "cdr": 2 / 3}
    )
    per_query = evaluate_per_query(run, qrels, ["cdr"], distractors=distractors)
    assert per_query == {"q1": {"cdr": 1.0}, "q2": {"cdr": 0.0}, "q3": {}}
    with pytest.raises(ValueError, match="cdr: no query"):
        evaluate(run, qrels, ["cdr"])


def test_evaluate_answers_takes_best_reference_and_scores_missing_as_empty():
    preds = {"q1": "The cat sat", "q2": "Paris"}
    refs = {"q1": ["a dog", "cat sat"], "q2": "paris.", "q3": "Rome"}
    per_query = evaluate_answers_per_query(preds, refs, ["em", "f1"])
    assert per_query["q1"] == {"em": 1.0, "f1": 1.0}  # best of the two references
    assert per_query["q3"] == {"em": 0.0, "f1": 0.0}  # no prediction
    assert evaluate_answers(preds, refs, ["em"]) == pytest.approx({"em": 2 / 3})
    with pytest.raises(ValueError, match="no reference"):
        evaluate_answers(preds, {"q1": []}, ["f1"])
    with pytest.raises(ValueError, match="query metric"):
        evaluate_answers(preds, refs, ["ndcg@10"])


def test_evaluate_evidence_compression_ratio():
    passages = {"q1": ["a b c d"], "q2": ["a b", "c d e f"]}
    evidence = {"q1": "a b", "q2": "c"}
    # q1: 4 / 2 = 2; q2: 6 / 1 = 6 -> mean 4
    assert evaluate_evidence(passages, evidence) == {"cr": 4.0}
    with pytest.raises(ValueError, match="no evidence"):
        evaluate_evidence(passages, {"q1": "a"})


def test_package_docstring_example_runs():
    result = doctest.testmod(metrics_pkg)
    assert result.attempted >= 1 and result.failed == 0


def test_record_metrics_read_the_run_and_skip_records_they_do_not_apply_to():
    from sciera.eval.metrics import evaluate_records, evaluate_records_per_query

    records = {
        "a": {"agent": {"search_calls": 3, "stopped_by": "answer"}},
        "b": {"agent": {"search_calls": 1, "stopped_by": "max_steps"}},
        "c": {"first": [], "answer": {"text": "Yes."}},  # single shot with an answer
        "d": {"first": []},  # single shot, no generator: completion does not apply
    }
    per_q = evaluate_records_per_query(records, ["search_calls", "completion"])
    assert per_q["search_calls"] == {"a": 3.0, "b": 1.0, "c": 1.0, "d": 1.0}
    assert per_q["completion"] == {"a": 1.0, "b": 0.0, "c": 1.0}
    assert evaluate_records(records, "completion") == {"completion": 2 / 3}
    assert evaluate_records({"d": records["d"]}, "completion") == {}
    with pytest.raises(ValueError, match="search_calls is a record metric"):
        evaluate({"q": ["d1"]}, {"q": {"d1": 1}}, ["search_calls"])


def test_evidence_recall_counts_everything_retrieved_before_any_reranker():
    from sciera.eval.metrics import evaluate_records

    rec = {
        "first": [[f"d{i}", 40.0 - i] for i in range(40)],
        "reranked": [["d0", 1.0]],  # a filter kept one: not what was retrieved
    }
    qrels = {"q": {"d0": 1, "d35": 1, "zz": 1}, "r": {"d1": 0}}
    got = evaluate_records({"q": rec, "r": rec}, ["evidence_recall"], qrels)
    assert got == {"evidence_recall": 2 / 3}  # r has no relevant document: left out
