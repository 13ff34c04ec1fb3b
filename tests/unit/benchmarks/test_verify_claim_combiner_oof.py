"""verify_claim_combiner_oof.py: the nested comparison over folds' rows (synthetic rows, no
model run): a negated-claim input that tells CONTRADICT apart wins, paired."""

from __future__ import annotations

import json

import numpy as np

from sciera.verify.calibration import LogisticCombiner

SCRIPT = "verify_claim_combiner_oof"


def _rows(fold: str, n: int, rng: np.random.Generator) -> list[dict]:
    rows = []
    for i in range(n):
        y = i % 3
        # the LLM leans to support for both evidence labels; the negated claim separates them
        llm = (0.8, 0.1, 0.1) if y < 2 else (0.1, 0.1, 0.8)
        neg = (0.7, 0.2, 0.1) if y == 0 else (0.2, 0.7, 0.1) if y == 1 else (0.3, 0.3, 0.4)
        rows.append(
            {
                "key": f"{fold}/{i}",
                "fold": fold,
                "label": y,
                "trained": tuple(rng.dirichlet([1, 1, 1])),
                "llm": llm,
                "neg": neg,
                "negated": True,
            }
        )
    return rows


def test_the_negated_claim_wins_out_of_fold_and_the_pairs_are_reported(bench):
    rng = np.random.default_rng(0)
    rows = {f: _rows(f, 45, rng) for f in ("cv1", "cv2", "cv3")}
    flat = LogisticCombiner(((0.0,) * 6,) * 3, (0.0, 0.0, 0.0), ("trained", "llm"))
    out = bench.evaluate(rows, dict.fromkeys(rows, flat))
    systems = out["systems"]
    assert out["rows_per_fold"] == {"cv1": 45, "cv2": 45, "cv3": 45}
    assert systems["oof_neg"]["accuracy"] > 0.95 > 0.7 > systems["oof"]["accuracy"]
    assert systems["oof_neg"]["contradict_recall"] == 1.0
    assert systems["llm"]["predicted"][1] == 0  # the raw LLM never says contradict here
    pair = out["paired"]["oof_neg_vs_oof"]
    assert pair["all_rows"]["p_value"] < 0.01 and pair["evidence_rows"]["mean_diff"] > 0.4
    assert set(out["paired"]) >= {"oof_vs_shipped_recipe", "llm_neg_vs_llm_oof"}
    json.dumps(out)
