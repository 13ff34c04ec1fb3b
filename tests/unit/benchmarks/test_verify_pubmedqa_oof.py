"""verify_pubmedqa_oof.py: pooling fold models' out-of-fold rows into a question combiner
(synthetic rows; no model run)."""

from __future__ import annotations

import gzip
import json

import numpy as np
import pytest

SCRIPT = "verify_pubmedqa_oof"


def _rows(n: int, seed: int, head_noise: float) -> list[dict]:
    """Questions whose 1.5B probabilities follow the gold label and whose head's are noise
    around it (``head_noise`` 1: no signal)."""
    rng = np.random.default_rng(seed)
    names = ("yes", "no", "maybe")
    out = []
    for i in range(n):
        y = int(rng.choice(3, p=[0.55, 0.35, 0.10]))
        llm = np.full(3, 0.1)
        llm[y] = 0.8
        head = (1 - head_noise) * llm + head_noise * rng.dirichlet(np.ones(3))
        row = {
            "id": f"{seed}-{i}",
            "gold": names[y],
            "p_trained": head.tolist(),
            "p_llm": llm.tolist(),
        }
        if y < 2:
            row["b_trained"], row["b_llm"] = head.tolist(), llm.tolist()
        out.append(row)
    return out


def test_arrays_take_the_snippet_rows_only_where_they_exist(bench):
    rows = _rows(40, 0, 0.5)
    a, b, y = bench.arrays(rows, "p")
    assert a.shape == b.shape == (40, 3) and len(y) == 40
    _, _, yb = bench.arrays(rows, "b")
    assert len(yb) == sum(r["gold"] != "maybe" for r in rows) and set(yb) <= {0, 1}


def test_a_combiner_fitted_on_rows_where_the_head_is_noise_learns_to_read_the_llm(bench):
    folds = [bench.arrays(_rows(120, s, 1.0), "p") for s in range(3)]
    comb = bench.fit(folds)
    a, b, y = bench.arrays(_rows(200, 9, 1.0), "p")
    assert (bench.predict(comb, a, b, False) == y).mean() > 0.95
    # a combiner that trusts only the head (as an in-sample fit would) does much worse
    head_only = bench.LogisticCombiner(
        ((5.0, 0, 0, 0, 0, 0), (0, 5.0, 0, 0, 0, 0), (0, 0, 5.0, 0, 0, 0)),
        (0, 0, 0),
        ("trained", "llm"),
    )
    report = bench.nested(folds, head_only)
    assert report["out_of_fold"]["accuracy"] > report["shipped"]["accuracy"] + 0.3
    assert report["paired_out_of_fold_vs_shipped"]["p_value"] < 0.01


def test_rows_without_the_llm_are_refused_with_their_path(bench, tmp_path):
    path = tmp_path / "m_llm_rows.jsonl.gz"
    with gzip.open(path, "wt") as fh:
        fh.write(json.dumps({"id": "1", "gold": "yes", "p_trained": [0.5, 0.3, 0.2]}) + "\n")
    with pytest.raises(SystemExit, match=r"m_llm_rows\.jsonl\.gz: no p_llm"):
        bench.read_rows(path)


def test_cross_validation_pools_each_folds_answers_and_pairs_combined_with_the_majority(bench):
    answers = [
        ("yes", "yes", "no", "yes", "yes"),  # gold, majority, head, 1.5B, combined
        ("no", "yes", "no", "yes", "no"),
        ("no", "yes", "yes", "yes", "no"),
        ("maybe", "yes", "maybe", "no", "yes"),
    ]
    keys = ("always_majority", "trained", "llm", "combined")
    rows = [{"gold": g, "reasoning": dict(zip(keys, rest, strict=True))} for g, *rest in answers]
    cv = bench.cross_validation(rows)
    assert [cv[k]["accuracy"] for k in keys] == [0.25, 0.5, 0.25, 0.75]
    assert cv["combined"]["n"] == 4 and cv["trained"]["predicted"] == {
        "yes": 1,
        "no": 2,
        "maybe": 1,
    }
    paired = cv["paired_combined_vs_always_majority"]
    assert (paired["a_only"], paired["b_only"]) == (2, 0)
