"""``sciera research`` through Typer with the scripted LLM in place of the real one."""

from __future__ import annotations

import json

import pytest
import typer
from click.testing import CliRunner
from research_script import Q, act, agent_llm, search

import sciera.llm.registry
from sciera.cli import app, research_cmds  # noqa: F401  (registers the command)


@pytest.fixture
def cli(monkeypatch, tmp_path, corpus):
    llm = agent_llm(search("vitamin deficiency multiple sclerosis"), act("answer"))
    monkeypatch.setattr(sciera.llm.registry, "make_llm", lambda settings: llm)
    monkeypatch.setenv("SCIERA_HOME", str(tmp_path))
    monkeypatch.setenv("SCIERA_RETRIEVE__RETRIEVER", "bm25")

    def run(*args, question=Q):
        group = typer.main.get_group(app)
        return CliRunner().invoke(group, ["research", question, "--corpus", str(corpus), *args])

    return run


def test_json_output_and_trace_file(cli, tmp_path):
    trace = tmp_path / "run.jsonl"
    result = cli("--json", "--type", "ideal", "--trace", str(trace))
    assert result.exit_code == 0, result.output
    data = json.loads(result.output)
    assert data["stopped_by"] == "answer" and data["search_calls"] == 1
    assert [s["action"] for s in data["trace"]] == ["search", "answer"]
    assert data["answer"]["citations"][0]["passage_id"] == "v1#0"
    assert len(trace.read_text().splitlines()) == 3


def test_explain_prints_every_step(cli):
    result = cli("--explain", "--type", "ideal")
    assert result.exit_code == 0, result.output
    assert "step 1: search 'vitamin deficiency multiple sclerosis'" in result.output
    assert "stopped by answer after 2 steps, 1 searches" in result.output


def test_bad_options_and_empty_question_are_refused(cli):
    assert "one of [10, 20, 50]" in str(cli("--depth", "30").exception)
    assert "question is empty" in str(cli(question="  ").exception)


def test_help_lists_the_options(cli):
    group = typer.main.get_group(app)
    out = CliRunner().invoke(group, ["research", "--help"]).output
    for flag in ("--max-steps", "--budget-tokens", "--max-seconds", "--q2q", "--depth", "--trace"):
        assert flag in out
