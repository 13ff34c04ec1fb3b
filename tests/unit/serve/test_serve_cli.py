"""``sciera serve``: corpus names, options and the key from the environment reach the app
(uvicorn.run replaced, so nothing listens)."""

from __future__ import annotations

from pathlib import Path

import pytest
import uvicorn
from fastapi.testclient import TestClient
from typer.testing import CliRunner

from sciera.cli import _register, app
from sciera.cli.serve_cmds import parse_corpora
from sciera.errors import ScieraError

_register()  # every command, as `sciera` has them (one alone would be the whole app)
runner = CliRunner()


def test_corpus_values_are_dirs_or_named_dirs(tmp_path):
    corpora = parse_corpora([str(tmp_path / "scifact"), "nf=corpora/nfcorpus"])
    assert corpora == {"scifact": tmp_path / "scifact", "nf": Path("corpora/nfcorpus")}
    assert list(corpora) == ["scifact", "nf"]  # the first is the default
    with pytest.raises(ScieraError, match="used twice"):
        parse_corpora(["a=x", "a=y"])
    with pytest.raises(ScieraError, match="NAME=DIR"):
        parse_corpora(["=x"])


@pytest.fixture
def served(monkeypatch: pytest.MonkeyPatch) -> dict:
    captured: dict = {}

    def fake_run(application, **kwargs):
        captured.update(kwargs, app=application)

    monkeypatch.setattr(uvicorn, "run", fake_run)
    return captured


def test_serve_builds_the_app_with_the_key_from_the_environment(corpus, served, tmp_path):
    args = ["serve", "--corpus", f"tiny={corpus}", "--port", "8123", "--queue-size", "0"]
    args += ["--experiments", str(tmp_path)]
    result = runner.invoke(app, args, env={"SCIERA_API_KEY": "k1"})
    assert result.exit_code == 0, result.output
    assert (served["host"], served["port"]) == ("127.0.0.1", 8123)
    application = served["app"]
    assert application.state.gate.max_waiting == 0
    with TestClient(application) as c:
        assert c.get("/v1/corpora").status_code == 401
        (info,) = c.get("/v1/corpora", headers={"X-API-Key": "k1"}).json()
        assert info["name"] == "tiny" and info["passages"] == 4


def test_a_folder_without_a_store_is_a_one_line_error(served, tmp_path):
    result = runner.invoke(app, ["serve", "--corpus", str(tmp_path)])
    assert isinstance(result.exception, ScieraError)
    assert "no passage store" in str(result.exception) and "sciera ingest" in str(result.exception)
    assert served == {}  # never started
