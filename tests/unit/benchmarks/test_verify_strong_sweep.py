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
    return {"id": cid, "gold": gold, "verdicts": {"open@5": {"combined": verdicts}}}


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
    monkeypatch.setattr(sys, "argv", [*argv, "--results", str(tmp_path)])
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


def test_rows_without_verdicts_are_refused(bench, tmp_path, monkeypatch):
    _rows(tmp_path / "old_rows.jsonl.gz", [{"id": "1", "gold": "SUPPORT", "open@5": {}}])
    monkeypatch.setattr(sys, "argv", ["x", "--runs", "old", "--results", str(tmp_path)])
    with pytest.raises(SystemExit, match="row 1 keeps no combined verdicts"):
        bench.main()
