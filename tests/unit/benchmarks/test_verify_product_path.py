"""verify_product_path.py: the user path's predictions paired with verify_scifact.py's rows
(the kept dev rows and the shared SciFact claims, no model run)."""

from __future__ import annotations

from dataclasses import replace
from pathlib import Path

SCRIPT = "verify_product_path"


def test_identical_predictions_pair_to_no_difference_and_a_lost_abstract_shows(
    bench, shared_data: Path
):
    from sciera.datasets.claims import read_gold

    ids = set(bench.dev_ids("scifact-verifier"))
    golds = [g for g in read_gold(shared_data / "scifact" / "claims_train.jsonl") if g.id in ids]
    rows = bench.benchmark_rows(
        bench.OUT / "scifact-verifier_dev_llm_rows.jsonl.gz", "open@5", "combined"
    )
    assert len(golds) == 93 and set(rows) == ids
    scores, tests, differ = bench.compare(golds, rows, rows)
    assert scores["product"] == scores["benchmark"] and differ == 0
    assert scores["benchmark"]["abstract_label_only_f1"] > 0.6  # the documented 0.698
    assert tests["abstract_label_only_f1"]["diff"] == 0.0
    # a claim whose abstracts the benchmark decided all right: the product misses them
    cid = next(
        g.id
        for g in golds
        if g.evidence
        and bench.decided(rows[g.id].evidence) == {d: a.label for d, a in g.evidence.items()}
    )
    lost = {**rows, cid: replace(rows[cid], evidence={})}
    scores, tests, differ = bench.compare(golds, lost, rows)
    assert differ == 1 and tests["abstract_label_only_f1"]["diff"] < 0
    assert tests["gold_abstract_label"]["a_only"] >= 1  # right on the benchmark path alone
    low, high = scores["product"], scores["benchmark"]
    assert low["abstract_label_only_recall"] < high["abstract_label_only_recall"]
