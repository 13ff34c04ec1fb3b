"""``sciera verify``'s arguments that do not go together are one-line errors before any
model loads or anything is written."""

from __future__ import annotations

import pytest
from typer.testing import CliRunner

from sciera.cli import _register, app
from sciera.errors import ScieraError

_register()
runner = CliRunner()


@pytest.mark.parametrize(
    ("args", "want"),
    [
        ([], "give a CLAIM or --claims FILE"),
        (["a claim", "--claims", "c.jsonl"], "give a CLAIM or --claims FILE"),
        (["--claims", "c.jsonl"], "--claims needs --out"),
        (["a claim", "--out", "p.jsonl"], "--out writes the predictions of --claims"),
    ],
)
def test_arguments_that_do_not_go_together(tmp_path, args, want):
    args = [str(tmp_path / a) if a.endswith(".jsonl") else a for a in args]
    out = runner.invoke(app, ["verify", "--corpus", str(tmp_path), "--no-llm", *args])
    assert isinstance(out.exception, ScieraError), out.output
    assert want in str(out.exception) and "\n" not in str(out.exception)
    assert not (tmp_path / "p.jsonl").exists()


def test_the_text_output_heads_an_undecided_abstracts_sentences_as_closest(capsys):
    from sciera.cli.verify_cmds import _print

    sentence = {"index": 2, "score": 0.61, "text": "Aspirin lowered the risk."}
    abstract = {"title": "T", "confidence": 0.8, "relevance": 0.7, "rationales": [sentence]}
    _print(
        {
            "claim": "Aspirin lowers the risk.",
            "label": "SUPPORT",
            "confidence": 0.8,
            "conflicting": False,
            "abstracts": [
                {**abstract, "doc_id": "d1", "label": "SUPPORT"},
                {**abstract, "doc_id": "d2", "label": "NOT ENOUGH INFO"},
            ],
        }
    )
    out = capsys.readouterr().out
    decided, undecided = out.split("[d2]")
    assert 'sentence 2 (0.61): "Aspirin lowered the risk."' in decided
    assert "closest" not in decided
    assert "closest sentences (evidence for neither side):" in undecided
    assert 'sentence 2 (0.61): "Aspirin lowered the risk."' in undecided
