"""`sciera dataset multidoc` on the real SciFact qrels, and `sciera eval leaderboard` /
`judge-sanity` refusing bad input with one line and a non-zero exit (before any model
loads)."""

from __future__ import annotations

import json

from train_cli import SCIFACT, run_sciera


def test_multidoc_builds_the_scifact_set_an_experiment_reads(tmp_path):
    out = tmp_path / "multi"
    done = run_sciera("dataset", "multidoc", "--queries", str(SCIFACT), "--out", str(out))
    assert done.returncode == 0, done.stderr
    assert done.stdout.startswith("23 questions (23 eligible of 300 judged), 62 relevant")
    built = json.loads((out / "construction.json").read_text())
    assert built["counts"]["kept"] == 23 and built["relevant_documents"]["total"] == 62
    from sciera.datasets.beir import load_beir

    assert len(load_beir(out).queries) == 23


def test_bad_inputs_are_one_line_errors(tmp_path):
    bad = run_sciera(
        "dataset",
        "multidoc",
        "--queries",
        str(SCIFACT),
        "--min-docs",
        "9",
        "--max-docs",
        "3",
        "--out",
        str(tmp_path / "x"),
    )
    assert bad.returncode != 0 and bad.stderr.strip().splitlines() == [
        "error: --max-docs 3 is below --min-docs 9"
    ]
    board = run_sciera("eval", "leaderboard", str(tmp_path), "--out", str(tmp_path / "b"))
    assert board.returncode != 0
    assert "not a results directory (no manifest.json)" in board.stderr
    assert len(board.stderr.strip().splitlines()) == 1
