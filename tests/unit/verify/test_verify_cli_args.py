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
