"""BioASQ exact-answer metrics (yes/no, factoid, list) on hand-computed examples."""

from __future__ import annotations

import pytest

from sciera.eval.metrics import (
    METRICS,
    bioasq,
    evaluate,
    evaluate_answers,
    evaluate_answers_per_query,
    evaluate_labels,
    factoid_lenient,
    factoid_mrr,
    factoid_strict,
    list_f1,
    list_precision,
    list_recall,
    list_scores,
    macro_f1,
    parse_metric,
    yesno_accuracy,
    yesno_macro_f1,
)
from sciera.eval.metrics.bioasq import class_f1, factoid_rank, label_of

# --- yes/no ---------------------------------------------------------------------------------


def test_yesno_macro_f1_bioasq_labels():
    gold = ["yes", "yes", "yes", "no", "no"]
    pred = ["yes", "yes", "no", "no", "yes"]
    # yes: TP 2 (q1, q2), FP 1 (q5), FN 1 (q3) -> 2*2 / (2*2 + 1 + 1) = 2/3
    # no:  TP 1 (q4),     FP 1 (q3), FN 1 (q5) -> 2*1 / (2*1 + 1 + 1) = 1/2
    assert class_f1(gold, pred, "yes") == pytest.approx(2 / 3)
    assert class_f1(gold, pred, "no") == pytest.approx(1 / 2)
    assert macro_f1(gold, pred) == pytest.approx((2 / 3 + 1 / 2) / 2)  # 7/12
    # corpus-level, not the mean of per-question accuracies (3/5)
    assert macro_f1(gold, pred) != pytest.approx(3 / 5)


def test_macro_f1_label_set_is_a_parameter_and_absent_class_scores_zero():
    gold = ["yes", "no", "yes"]
    pred = ["yes", "no", "no"]
    # yes: TP 1, FN 1 -> 2/3; no: TP 1, FP 1 -> 2/3
    assert macro_f1(gold, pred) == pytest.approx(2 / 3)
    # PubMedQA labels: "maybe" is in neither gold nor predictions -> F1 0 (official scorer)
    # -> (2/3 + 2/3 + 0) / 3 = 4/9
    assert macro_f1(gold, pred, bioasq.PUBMEDQA_LABELS) == pytest.approx(4 / 9)


def test_macro_f1_prediction_outside_labels_is_a_miss_only():
    # "refused" on a "yes" question: FN of yes; not a false positive of "no"
    # yes: TP 0 -> 0; no: TP 1, FP 0, FN 0 -> 1  => (0 + 1) / 2
    assert macro_f1(["yes", "no"], ["refused", "no"]) == pytest.approx(0.5)
    # "maybe" predicted under PubMedQA labels: FP of maybe
    # yes: TP 1, FN 0, FP 0 -> 1; no: TP 0 -> 0; maybe: TP 0 -> 0 => 1/3
    assert macro_f1(["yes", "no"], ["yes", "maybe"], ("yes", "no", "maybe")) == pytest.approx(1 / 3)


def test_macro_f1_normalizes_case_and_punctuation():
    assert macro_f1(["yes", "No"], ["Yes.", " NO! "]) == 1.0


def test_macro_f1_rejects_bad_input():
    with pytest.raises(ValueError, match="2 gold labels but 1"):
        macro_f1(["yes", "no"], ["yes"])
    with pytest.raises(ValueError, match="no question"):
        macro_f1([], [])
    with pytest.raises(ValueError, match=r"gold labels \['maybe'\] are not in the label set"):
        macro_f1(["yes", "maybe"], ["yes", "no"])  # BioASQ labels by default
    with pytest.raises(ValueError, match="distinct non-empty"):
        macro_f1(["yes"], ["yes"], ("yes", "Yes"))
    with pytest.raises(ValueError, match="distinct non-empty"):
        macro_f1(["yes"], ["yes"], ())


def test_yesno_accuracy():
    assert yesno_accuracy("Yes.", "yes") == 1.0
    assert yesno_accuracy("no", "yes") == 0.0
    assert yesno_accuracy("", "yes") == 0.0
    preds = {"q1": "yes", "q2": "maybe"}
    refs = {"q1": "yes", "q2": "no", "q3": "yes"}
    # q1 right, q2 wrong, q3 unanswered -> (1 + 0 + 0) / 3
    assert evaluate_answers(preds, refs, ["yesno_accuracy"]) == pytest.approx(
        {"yesno_accuracy": 1 / 3}
    )


# --- factoid --------------------------------------------------------------------------------


def test_factoid_strict_lenient_mrr_over_questions():
    preds = {
        "q1": ["IL-6", "TNF"],  # synonym of the gold entity at rank 1
        "q2": ["TNF", "IL1", "Interleukin-6!"],  # "interleukin6" at rank 3
        "q3": ["a", "b", "c", "d", "e", "IL-6"],  # rank 6: beyond the five that count
    }
    gold = ["interleukin-6", "IL-6"]  # one gold entity with its synonyms
    refs = {"q1": [gold], "q2": [gold], "q3": [gold]}
    scores = evaluate_answers(preds, refs, ["factoid_strict", "factoid_lenient", "factoid_mrr"])
    assert scores == pytest.approx(
        {
            "factoid_strict": (1 + 0 + 0) / 3,
            "factoid_lenient": (1 + 1 + 0) / 3,
            "factoid_mrr": (1 + 1 / 3 + 0) / 3,  # 4/9
        }
    )
    assert factoid_rank(preds["q2"], gold) == 3
    assert factoid_rank(preds["q3"], gold) is None
    assert factoid_rank(preds["q3"][1:], gold) == 5  # the fifth still counts


def test_factoid_several_gold_entities_are_references_and_best_wins():
    # gold entities [a, a2] and [b]: the first predicted match at rank 2 -> 1/2
    refs = {"q1": [["a", "a2"], ["b"]]}
    per_query = evaluate_answers_per_query({"q1": ["x", "b", "a2"]}, refs, ["factoid_mrr"])
    assert per_query == {"q1": {"factoid_mrr": pytest.approx(1 / 2)}}
    # a flat synonym list is the same single entity: "a2" at rank 1
    assert factoid_strict(["a2"], ["a", "a2"]) == 1.0


def test_factoid_edge_cases():
    assert factoid_mrr([], "IL-6") == 0.0
    assert factoid_lenient("", "IL-6") == 0.0  # an empty string is no answer
    assert factoid_strict("il 6", "IL 6") == 1.0  # a bare string is one entity
    assert factoid_strict("IL6", "IL 6") == 0.0  # whitespace still separates words
    # duplicates keep their positions: the gold entity is third
    assert factoid_mrr(["TNF", "tnf", "IL-6"], "il-6") == pytest.approx(1 / 3)
    # "a" and "The" both normalize to "": an empty synonym never matches
    assert factoid_strict(["a"], ["The"]) == 0.0
    # missing prediction through evaluate_answers -> 0
    assert evaluate_answers({}, {"q1": "IL-6"}, ["factoid_mrr"]) == {"factoid_mrr": 0.0}
    with pytest.raises(TypeError, match="must be a string"):
        factoid_strict([["IL-6"]], "IL-6")  # type: ignore[list-item]


# --- list -----------------------------------------------------------------------------------

GOLD_LIST = [["IL-6", "interleukin 6"], ["TNF-alpha", "TNF"], ["IL-1"]]  # 3 entities


def test_list_scores_with_synonyms_and_one_to_one_matching():
    pred = ["interleukin 6", "tnf", "IL-10", "IL-6"]
    # interleukin 6 -> entity 1 (TP), tnf -> entity 2 (TP), IL-10 -> FP,
    # IL-6 -> entity 1 already found -> FP
    # P = 2/4, R = 2/3, F1 = 2 * (1/2) * (2/3) / (1/2 + 2/3) = (2/3) / (7/6) = 4/7
    scores = list_scores(pred, GOLD_LIST)
    assert scores.precision == pytest.approx(1 / 2)
    assert scores.recall == pytest.approx(2 / 3)
    assert scores.f1 == pytest.approx(4 / 7)


def test_list_duplicates_counted_once():
    pred = ["TNF", "tnf.", "The TNF", "IL-1"]  # all three TNF spellings normalize to "tnf"
    # distinct predicted: tnf, il1 -> both TP: P = 2/2, R = 2/3, F1 = 2 * 1 * (2/3) / (5/3) = 4/5
    assert list_precision(pred, GOLD_LIST) == 1.0
    assert list_recall(pred, GOLD_LIST) == pytest.approx(2 / 3)
    assert list_f1(pred, GOLD_LIST) == pytest.approx(4 / 5)


def test_list_edge_cases():
    assert list_scores([], GOLD_LIST) == bioasq.ListScores(0.0, 0.0, 0.0)
    assert list_scores(["", "!"], GOLD_LIST) == bioasq.ListScores(0.0, 0.0, 0.0)
    assert list_scores(["IL-2"], GOLD_LIST) == bioasq.ListScores(0.0, 0.0, 0.0)
    # a bare string prediction is one entity: P = 1/1, R = 1/3, F1 = 2 * (1/3) / (4/3) = 1/2
    assert list_f1("il-1", GOLD_LIST) == pytest.approx(1 / 2)
    with pytest.raises(TypeError, match="not a string"):
        list_scores(["a"], "a")  # type: ignore[arg-type]
    with pytest.raises(TypeError, match="must be a list of synonyms"):
        list_scores(["a"], ["a", "b"])  # type: ignore[list-item]
    with pytest.raises(ValueError, match="at least one entity"):
        list_scores(["a"], [])
    with pytest.raises(ValueError, match="at least one synonym"):
        list_scores(["a"], [[]])


def test_list_means_over_questions_through_evaluate_answers():
    preds = {"q1": ["interleukin 6", "tnf", "IL-10", "IL-6"], "q2": ["TNF", "tnf.", "IL-1"]}
    refs = {"q1": [GOLD_LIST], "q2": [GOLD_LIST], "q3": [GOLD_LIST]}  # q3 unanswered
    # q1: P 1/2, R 2/3, F1 4/7; q2: P 1, R 2/3, F1 4/5; q3: 0, 0, 0
    assert evaluate_answers(preds, refs, ["list_precision", "list_recall", "list_f1"]) == (
        pytest.approx(
            {
                "list_precision": (1 / 2 + 1 + 0) / 3,  # 1/2
                "list_recall": (2 / 3 + 2 / 3 + 0) / 3,  # 4/9
                "list_f1": (4 / 7 + 4 / 5 + 0) / 3,  # 16/35
            }
        )
    )
    # forgetting to wrap the gold list fails loudly instead of scoring each entity alone
    with pytest.raises(TypeError, match="wrap a list question's gold answer"):
        evaluate_answers(preds, {"q1": GOLD_LIST}, ["list_f1"])


# --- registry -------------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("spec", "fn"),
    [
        ("yesno_accuracy", yesno_accuracy),
        ("factoid_strict", factoid_strict),
        ("factoid_lenient", factoid_lenient),
        ("factoid_mrr", factoid_mrr),
        ("list_precision", list_precision),
        ("list_recall", list_recall),
        ("list_f1", list_f1),
    ],
)
def test_registry_round_trip(spec, fn):
    parsed = parse_metric(f" {spec.upper()} ")
    assert parsed.label == spec
    assert parsed.definition is METRICS[spec]
    assert parsed.definition.kind == "answer"
    assert parsed.definition.compute is fn
    assert parsed.k is None


def test_bioasq_specs_belong_to_evaluate_answers():
    with pytest.raises(ValueError, match=r"factoid_mrr is an answer metric; use evaluate_answers"):
        evaluate({}, {"q1": {"d": 1}}, ["factoid_mrr"])
    # corpus-level: a label metric, not a per-question one
    with pytest.raises(ValueError, match=r"macro_f1 is a label metric; use evaluate_labels"):
        evaluate_answers({"q1": "yes"}, {"q1": "yes"}, ["macro_f1"])


def test_exact_answer_specs_are_flagged():
    exact = sorted(p for p, d in METRICS.items() if d.exact)
    assert exact == [
        "factoid_lenient",
        "factoid_mrr",
        "factoid_strict",
        "list_f1",
        "list_precision",
        "list_recall",
        "yesno_accuracy",
    ]
    assert parse_metric("MACRO_F1").definition.kind == "label"


# --- labels over a corpus -------------------------------------------------------------------


def test_label_of_reads_a_one_item_exact_answer():
    assert label_of("yes") == "yes"
    assert label_of(("no",)) == "no"
    assert label_of(()) == ""  # refusal / degraded answer
    assert label_of(["a", "b"]) == ""  # several entities are no label
    assert yesno_accuracy(["Yes"], "yes") == 1.0
    assert yesno_accuracy([], "yes") == 0.0


def test_yesno_macro_f1_label_set_follows_the_gold_labels():
    # no gold "maybe" -> BioASQ labels: yes TP 1 FN 1 -> 2/3; no TP 1 FP 1 -> 2/3
    assert yesno_macro_f1(["yes", "no", "yes"], ["yes", "no", "no"]) == pytest.approx(2 / 3)
    # a gold "maybe" -> PubMedQA labels; yes 1, no 1, maybe TP 0 -> 0 => 2/3
    assert yesno_macro_f1(["yes", "no", "Maybe"], ["yes", "no", "no"]) == pytest.approx(
        (1 + 2 / 3 + 0) / 3
    )


def test_evaluate_labels_missing_or_non_label_predictions_are_wrong():
    gold = {"q1": "yes", "q2": "no", "q3": "maybe", "q4": "yes"}
    predicted = {"q1": ["yes"], "q2": [], "q3": "maybe"}  # q2 refused, q4 missing
    # yes: TP 1, FN 1 (q4) -> 2/3; no: TP 0 -> 0; maybe: TP 1 -> 1  => (2/3 + 0 + 1) / 3 = 5/9
    assert evaluate_labels(gold, predicted) == {"macro_f1": pytest.approx(5 / 9)}
    with pytest.raises(ValueError, match="no question"):
        evaluate_labels({}, predicted)
    with pytest.raises(ValueError, match="yesno_accuracy is an answer metric"):
        evaluate_labels(gold, predicted, ["yesno_accuracy"])
