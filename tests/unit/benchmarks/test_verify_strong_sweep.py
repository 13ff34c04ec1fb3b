"""verify_strong_sweep.py: the claim-level decision recomputed at other ``strong`` from the
abstract verdicts a verify_scifact.py run keeps (hand-made rows, no model)."""

from __future__ import annotations

import gzip
import json
import sys
from pathlib import Path

import pytest

SCRIPT = "verify_strong_sweep"


def _rows(path: Path, rows: list[dict]) -> None:
    with gzip.open(path, "wt", encoding="utf-8") as fh:
        for row in rows:
            fh.write(json.dumps(row) + "\n")


def _claim(cid: str, gold: str, verdicts: list) -> dict:
    labels = {doc: {"label": label, "sentences": [0]} for doc, label, _ in verdicts}
    return {
        "id": cid,
        "gold": gold,
        "verdicts": {"open@5": {"combined": verdicts}},
        "open@5": {"combined": labels},
    }


def _gold(path: Path) -> Path:
    """Claims 1 (d1 SUPPORT) and 3 (d4 CONTRADICT) have evidence; claim 2 has none."""
    rows = [
        {"id": 1, "claim": "a", "evidence": {"d1": [{"sentences": [0], "label": "SUPPORT"}]}},
        {"id": 2, "claim": "b", "evidence": {}},
        {"id": 3, "claim": "c", "evidence": {"d4": [{"sentences": [0], "label": "CONTRADICT"}]}},
    ]
    path.write_text("".join(json.dumps(r) + "\n" for r in rows), encoding="utf-8")
    return path


def test_a_higher_strong_refuses_more_and_decides_more_precisely(bench, tmp_path, monkeypatch):
    _rows(
        tmp_path / "a_rows.jsonl.gz",
        [
            _claim("1", "SUPPORT", [["d1", "SUPPORT", 0.5], ["d9", "NOT ENOUGH INFO", 0.9]]),
            _claim("2", "NOT ENOUGH INFO", [["d2", "SUPPORT", 0.35]]),
        ],
    )
    _rows(
        tmp_path / "b_rows.jsonl.gz",
        [_claim("3", "CONTRADICT", [["d3", "SUPPORT", 0.45], ["d4", "CONTRADICT", 0.7]])],
    )
    argv = ["x", "--runs", "a", "b", "--grid", "0.3", "0.4", "0.6", "--name", "s"]
    gold = ["--claims", str(_gold(tmp_path / "claims.jsonl"))]
    monkeypatch.setattr(sys, "argv", [*argv, *gold, "--results", str(tmp_path)])
    bench.main()
    out = json.loads((tmp_path / "s.json").read_text())
    a, pooled = out["runs"]["a"], out["pooled"]
    assert a["0.3"]["decided"] == 2 and a["0.3"]["precision"] == 0.5
    assert a["0.4"]["decided"] == 1 and a["0.4"]["precision"] == 1.0
    assert a["0.6"]["refusal_rate"] == 1.0 and a["0.6"]["decided"] == 0
    # claim 3: strong abstracts on both sides are CONFLICTING (decided, wrong) until the
    # support falls below strong, then CONTRADICT
    assert out["runs"]["b"]["0.4"]["precision"] == 0.0
    assert out["runs"]["b"]["0.6"]["precision"] == 1.0
    assert pooled["0.6"]["answerable"] == 2 and pooled["0.6"]["refusal_rate"] == 0.5
    # on the answerable claims alone (1 and 3) the decision on claim 2 does not count
    assert a["0.3"]["decided_answerable"] == 1 and a["0.3"]["answerable_precision"] == 1.0
    assert pooled["0.3"]["answerable_precision"] == 0.5  # claim 3 CONFLICTING at 0.3
    # abstract level on the answerable claims: d1 right, d3 wrong (no gold), d4 right;
    # d2 (claim 2 has no evidence) is left out
    ab = out["abstracts_answerable"]
    assert ab["a"]["predicted"] == 1 and ab["a"]["precision"] == 1.0
    assert ab["pooled"]["predicted"] == 3 and ab["pooled"]["precision"] == 2 / 3
    assert ab["pooled"]["recall"] == 1.0


def test_rows_without_verdicts_are_refused(bench, tmp_path, monkeypatch):
    _rows(tmp_path / "old_rows.jsonl.gz", [{"id": "1", "gold": "SUPPORT", "open@5": {}}])
    gold = ["--claims", str(_gold(tmp_path / "claims.jsonl"))]
    monkeypatch.setattr(sys, "argv", ["x", "--runs", "old", *gold, "--results", str(tmp_path)])
    with pytest.raises(SystemExit, match="row 1 keeps no combined verdicts"):
        bench.main()
