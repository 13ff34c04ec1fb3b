"""SciFact's worked example (doc/evaluation.md of the SciFact repository): one gold claim and
one prediction, shared by the metric tests and the evaluator tests."""

GOLD_52 = {
    "id": 52,
    "claim": "ALDH1 expression is associated with poorer prognosis for breast cancer.",
    "evidence": {
        "11": [
            {"sentences": [0, 1], "label": "SUPPORT"},
            {"sentences": [11], "label": "SUPPORT"},
        ],
        "15": [{"sentences": [4], "label": "SUPPORT"}],
    },
    "cited_doc_ids": [11, 15],
}
PRED_52 = {
    "id": 52,
    "evidence": {
        "11": {"sentences": [1, 11, 13], "label": "SUPPORT"},
        "16": {"sentences": [18, 20], "label": "CONTRADICT"},
    },
}
