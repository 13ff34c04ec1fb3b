"""verify_compare.py: two runs' rows paired (tiny rows over real SciFact training claims, no
model run)."""

from __future__ import annotations

import gzip
import json
import sys
from pathlib import Path

import pytest

SCRIPT = "verify_compare"


def _rows(path: Path, evidence: dict[str, dict]) -> None:
    with gzip.open(path, "wt", encoding="utf-8") as fh:
        for cid, ev in evidence.items():
            fh.write(json.dumps({"id": cid, "open@5": {"trained": ev}}) + "\n")


def test_a_run_right_on_every_abstract_beats_one_deciding_nothing(
    bench, shared_data: Path, tmp_path, monkeypatch
):
    from sciera.datasets.claims import read_gold

    golds = [g for g in read_gold(shared_data / "scifact" / "claims_train.jsonl") if g.evidence]
    golds = golds[:12]
    right = {
        g.id: {
            d: {"label": a.label, "sentences": sorted(set().union(*a.rationales))}
            for d, a in g.evidence.items()
        }
        for g in golds
    }
    _rows(tmp_path / "none_rows.jsonl.gz", {g.id: {} for g in golds})
    _rows(tmp_path / "gold_rows.jsonl.gz", right)
    argv = ["verify_compare.py", "--a", "none", "--b", "gold", "--settings", "open@5"]
    monkeypatch.setattr(sys, "argv", [*argv, "--results", str(tmp_path)])
    bench.main()
    out = json.loads((tmp_path / "compare_none_vs_gold.json").read_text())
    assert out["n_claims"] == 12
    res = out["results"]["open@5"]
    assert res["gold"]["abstract_label_only_f1"] == 1.0 == res["gold"]["sentence_label_f1"]
    assert res["none"]["abstract_label_only_f1"] == 0.0
    test = out["paired"]["open@5"]["gold_vs_none"]
    assert test["abstract_label_only_f1"]["diff"] == 1.0
    assert test["abstract_label_only_f1"]["p_value"] < 0.01
    assert test["gold_abstract_label"]["b_only"] == sum(len(g.evidence) for g in golds)


def test_runs_on_other_claims_are_refused(bench, shared_data: Path, tmp_path, monkeypatch):
    _rows(tmp_path / "a_rows.jsonl.gz", {"1": {}})
    _rows(tmp_path / "b_rows.jsonl.gz", {"3": {}})
    argv = ["x", "--a", "a", "--b", "b", "--settings", "open@5", "--results", str(tmp_path)]
    monkeypatch.setattr(sys, "argv", argv)
    with pytest.raises(SystemExit, match="not on the same claims"):
        bench.main()


def test_folds_pool_into_one_comparison(bench, shared_data: Path, tmp_path, monkeypatch):
    from sciera.datasets.claims import read_gold

    golds = [g for g in read_gold(shared_data / "scifact" / "claims_train.jsonl") if g.evidence]
    folds = [golds[:6], golds[6:12]]
    for k, fold in enumerate(folds):
        _rows(tmp_path / f"none{k}_rows.jsonl.gz", {g.id: {} for g in fold})
        right = {
            g.id: {d: {"label": a.label, "sentences": []} for d, a in g.evidence.items()}
            for g in fold
        }
        _rows(tmp_path / f"gold{k}_rows.jsonl.gz", right)
    argv = ["x", "--a", "none0", "none1", "--b", "gold0", "gold1", "--name", "pooled"]
    monkeypatch.setattr(sys, "argv", [*argv, "--settings", "open@5", "--results", str(tmp_path)])
    bench.main()
    out = json.loads((tmp_path / "pooled.json").read_text())
    assert out["n_claims"] == 12 and out["b"] == "gold0+gold1"
    assert out["results"]["open@5"]["gold0+gold1"]["abstract_label_only_f1"] == 1.0
    # the same fold twice on one side is refused: its claims would count twice
    argv = ["x", "--a", "none0", "none0", "--b", "gold0", "gold1", "--results", str(tmp_path)]
    monkeypatch.setattr(sys, "argv", [*argv, "--settings", "open@5"])
    with pytest.raises(SystemExit, match="in another run on this side"):
        bench.main()
