"""What `sciera train verifier` prints at the end, read from the shipped model's card (its
combiners' cross-validated section holds the fold count beside the per-model scores)."""

from __future__ import annotations

import json
from pathlib import Path

from sciera.cli.train_verifier_cmds import verifier_summary

CARD = Path(__file__).resolve().parents[2] / "src/sciera/verify/models/scifact-verifier"


def test_the_summary_reads_the_shipped_card():
    card = json.loads((CARD / "sciera-card.json").read_text(encoding="utf-8"))
    lines = verifier_summary(card, CARD)
    assert lines[0].startswith(f"model: {CARD} (best epoch {card['best_epoch']}")
    combined = [line for line in lines if line.startswith("LLM combiner (claims")]
    assert combined and "combined 0." in combined[0] and "folds" not in combined[0]
    assert any(line.startswith("combined verdict's gate: {") for line in lines)
