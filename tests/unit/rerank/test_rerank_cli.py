"""The ``sciera rerank`` command over an in-memory first stage and the stand-in LLM."""

from __future__ import annotations

import json

import pytest
import typer
from click.testing import CliRunner

import sciera.llm.registry
import sciera.retrieve.open
from conftest import QUERY, OverlapLLM, make_ranking
from sciera.cli import app, rerank_cmds  # noqa: F401  (registers the command)


class MemoryRetriever:
    def search(self, query, k):
        return make_ranking().top(k)


@pytest.fixture
def cli(monkeypatch, tmp_path):
    monkeypatch.setattr(sciera.retrieve.open, "open_retriever", lambda *a, **k: MemoryRetriever())
    monkeypatch.setattr(sciera.llm.registry, "make_llm", lambda settings: OverlapLLM())
    monkeypatch.setenv("SCIERA_HOME", str(tmp_path))  # no calibrator there: raw scores

    def run(*args):
        group = typer.main.get_group(app)  # a group even when other command modules are absent
        result = CliRunner().invoke(group, ["rerank", QUERY, "--corpus", str(tmp_path), *args])
        assert result.exit_code == 0, result.output
        return result.output

    return run


def test_text_output_lists_kept_and_filtered(cli):
    out = cli("--reranker", "deepera", "--depth", "5")
    assert "deepera over hybrid top-5: 2 passages" in out
    assert "1. 1.000  d2#0  Vitamin D and fractures" in out
    assert "filtered (3):" in out and "score 0.300 < tau 0.80" in out
    assert "raw grade expectation (no calibrator)" in out


def test_json_with_explain_has_the_trace(cli):
    data = json.loads(
        cli(
            "--reranker",
            "deepera",
            "--tau",
            "0.5",
            "--top-k",
            "1",
            "--json",
            "--explain",
            "--no-filter",
        )
    )
    assert [r["passage_id"] for r in data["results"]] == ["d2#0"]
    assert {f["passage_id"]: f["why"] for f in data["filtered"]}["d5#0"] == "beyond top_k=1"
    assert data["filter"] == {"tau": None, "top_k": 1}  # --no-filter: top_k alone
    assert data["trace"]["settings"]["prune_tau"] is None
    assert data["trace"]["intent"]["intent"] == "mechanism"


def test_other_rerankers_print_top_k(cli):
    out = cli("--reranker", "llm_graded", "--top-k", "2")
    assert "llm_graded over hybrid top-30: 2 passages" in out
