"""rerank_scifact's summary: each reranker against the first stage on the claims it ran."""

from __future__ import annotations

from pathlib import Path

SCRIPT = "rerank_scifact"


def _cands() -> dict:
    items = {
        "q1": [["a#0", "a", 0.9], ["b#0", "b", 0.5], ["c#0", "c", 0.1]],
        "q2": [["d#0", "d", 0.9], ["e#0", "e", 0.5], ["f#0", "f", 0.1]],
    }
    return {"claims": {q: {"items": v, "seconds": 0.01} for q, v in items.items()}}


def test_summary_counts_claims_returned_in_first_stage_order(bench, tmp_path: Path) -> None:
    qrels = {"q1": {"b": 1}, "q2": {"d": 1}}
    rows = {
        ("embedding", "q1"): {"qid": "q1", "ranked": ["b", "a", "c"], "seconds": 1.0},
        ("embedding", "q2"): {"qid": "q2", "ranked": ["d", "e", "f"], "seconds": 1.0},
    }
    rows[("llm_pointwise", "q1")] = {"qid": "q1", "ranked": [], "seconds": 9.0}  # returned nothing
    for key, row in rows.items():
        row.update(reranker=key[0], n_candidates=3)
    out = bench.summarize(rows, ["q1", "q2"], qrels, _cands(), tmp_path)
    rec = out["embedding"]
    assert rec["claims_completed"] == 2 and rec["first_stage_order_kept"] == 1
    assert rec["hit@1"] == 1.0 and rec["first_stage_same_claims"]["hit@1"] == 0.5
    assert rec["delta_vs_first_stage"]["hit@1"] == 0.5
    sig = rec["significance_vs_first_stage"]
    assert (sig["hit@1"]["b_only"], sig["hit@1"]["a_only"], sig["hit@1"]["p_value"]) == (1, 0, 1.0)
    assert sig["ndcg@10"]["n"] == 2 and sig["ndcg@10"]["mean_diff"] > 0
    assert out["llm_pointwise"]["first_stage_order_kept"] == 0  # an empty list is no order


def test_report_keeps_the_configs_rows_recorded_for_rerankers_not_run(bench) -> None:
    old = {"window": 20, "model_id": "m"}
    rows = {
        ("llm_listwise", "q1"): {"config": old},
        ("llm_listwise", "q2"): {"config": old},
        ("deepera", "q1"): {"config": {"tau": 0.8}},
        ("deepera", "q2"): {"config": {"tau": 0.5}},
        ("first_stage", "q1"): {},
    }
    now = {"deepera": {"tau": 0.7}}
    out = bench.report_configs(rows, now)
    assert out == {"llm_listwise": old, "deepera": {"tau": 0.7}}
    del now["deepera"]
    assert bench.report_configs(rows, now)["deepera"] == [{"tau": 0.8}, {"tau": 0.5}]
