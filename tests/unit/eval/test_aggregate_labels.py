"""Aggregating exact answers: BioASQ specs read the recorded exact answer, ``macro_f1``
scores it against the dataset's gold labels, and old logs (no ``exact``) still aggregate."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest

from sciera.eval.aggregate import aggregate
from sciera.eval.runstore import Results

GOLD = {"q1": "yes", "q2": "yes", "q3": "no", "q4": "maybe", "q5": "no"}


def results(
    metrics: list[str],
    repeats: list[dict[str, dict[str, Any]]],
    labels: dict[str, str] | None = GOLD,
) -> Results:
    """One pipeline; ``repeats[r][qid]`` is the answer record of question ``qid``."""
    qids = sorted(repeats[0])
    dataset: dict[str, Any] = {
        "queries": {q: f"question {q}?" for q in qids},
        "qrels": {},
        "answers": {q: [GOLD[q], f"long answer {q}"] for q in qids},
    }
    if labels is not None:
        dataset["labels"] = {q: labels[q] for q in qids}
    manifest = {
        "experiment": {"name": "labels", "metrics": metrics, "pipelines": [{"name": "gen"}]},
        "plan": {"gen": len(repeats)},
    }
    records = {
        "gen": {
            r: {q: {"qid": q, "first": [], "answer": a} for q, a in answers.items()}
            for r, answers in enumerate(repeats)
        }
    }
    return Results(Path("unused"), manifest, dataset, records)


def answer(exact: list[str], text: str = "See the abstract [1].") -> dict[str, Any]:
    return {"text": text, "exact": exact}


def test_exact_answers_give_accuracy_and_macro_f1() -> None:
    r0 = {
        "q1": answer(["yes"], text="long answer q1"),  # em 1 on the text; exact right
        "q2": answer(["no"]),
        "q3": answer(["no"]),
        "q4": answer([]),  # refused: no label
        "q5": answer(["yes"]),
    }
    r1 = {
        "q1": answer(["yes"], text="long answer q1"),
        "q2": answer(["yes"]),
        "q3": answer(["no"]),
        "q4": answer(["no"]),
        "q5": answer(["no"]),
    }
    (row,) = aggregate(results(["yesno_accuracy", "macro_f1", "em"], [r0, r1]))
    # r0: right on q1, q3 -> 2/5; r1: wrong only on q4 -> 4/5
    assert row.cells["yesno_accuracy"].values == pytest.approx((2 / 5, 4 / 5))
    # gold has "maybe" -> labels yes/no/maybe.
    # r0: yes TP 1 (q1) FP 1 (q5) FN 1 (q2) -> 1/2; no TP 1 (q3) FP 1 (q2) FN 1 (q5) -> 1/2;
    #     maybe TP 0 -> 0 (q4 refused)                     => (1/2 + 1/2 + 0) / 3 = 1/3
    # r1: yes TP 2 -> 1; no TP 2 FP 1 (q4) -> 4/5; maybe 0  => (1 + 4/5 + 0) / 3 = 3/5
    assert row.cells["macro_f1"].values == pytest.approx((1 / 3, 3 / 5))
    assert row.cells["macro_f1"].mean == pytest.approx((1 / 3 + 3 / 5) / 2)
    # em still reads the free text: only q1's text is a reference (its long answer)
    assert row.cells["em"].values == pytest.approx((1 / 5, 1 / 5))
    assert list(row.cells)[:3] == ["yesno_accuracy", "em", "macro_f1"]


def test_old_records_without_exact_fall_back_to_the_text() -> None:
    # a run resumed across the change: q1 logged before exact answers were stored
    r0 = {"q1": {"text": "Yes."}, "q3": answer(["no"], text="It does not [1].")}
    (row,) = aggregate(results(["yesno_accuracy", "macro_f1"], [r0]))
    # q1's text normalizes to "yes", q3's exact answer is "no": both right, labels yes/no
    assert row.cells["yesno_accuracy"].mean == 1.0
    assert row.cells["macro_f1"].mean == 1.0
    old = {"q1": {"text": "Yes, it helps [1]."}, "q3": {"text": "no"}}
    (row,) = aggregate(results(["yesno_accuracy", "macro_f1"], [old]))
    # q1: free text is not a label -> wrong. yes TP 0 -> 0; no TP 1 -> 1 => 1/2
    assert row.cells["yesno_accuracy"].mean == pytest.approx(1 / 2)
    assert row.cells["macro_f1"].mean == pytest.approx(1 / 2)


def test_no_gold_labels_no_macro_f1_column() -> None:
    # an older dataset.json (or SSLI/BEIR): no labels -> the column is left out
    r0 = {"q1": answer(["yes"]), "q3": answer(["yes"])}
    (row,) = aggregate(results(["yesno_accuracy", "macro_f1"], [r0], labels=None))
    assert "macro_f1" not in row.cells
    assert row.cells["yesno_accuracy"].mean == pytest.approx(1 / 2)
