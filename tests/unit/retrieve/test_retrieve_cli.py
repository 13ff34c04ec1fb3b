"""``sciera index`` / ``sciera search`` on a tiny real store (BM25 only: no model loads)."""

from __future__ import annotations

import json

import pytest
from typer.testing import CliRunner

import sciera.cli.search_cmds  # noqa: F401  (registers the commands)
from sciera.cli import app
from sciera.errors import ScieraError, StaleIndexError

runner = CliRunner()


def test_index_then_search_json_and_table(small_corpus):
    built = runner.invoke(app, ["index", "--corpus", str(small_corpus), "--bm25-only"])
    assert built.exit_code == 0, built.output
    assert "bm25" in built.output and "12" in built.output

    found = runner.invoke(
        app,
        [
            "search",
            "insulin resistance",
            "--corpus",
            str(small_corpus),
            "--retriever",
            "bm25",
            "-k",
            "2",
            "--json",
        ],
    )
    assert found.exit_code == 0, found.output
    data = json.loads(found.output)
    assert data["retriever"] == "bm25" and data["unit"] == "passage"
    assert len(data["items"]) == 2
    top = data["items"][0]
    assert top["rank"] == 1 and "insulin" in top["title"].lower()
    assert top["passage_id"].startswith(top["doc_id"] + "#")

    table = runner.invoke(
        app, ["search", "gut microbiome", "--corpus", str(small_corpus), "--retriever", "bm25"]
    )
    assert table.exit_code == 0 and "passage id" in table.output and "microbiome" in table.output


def test_search_documents_and_stale_after_parameter_change(small_corpus):
    runner.invoke(app, ["index", "--corpus", str(small_corpus), "--bm25-only", "--k1", "1.2"])
    # settings for search come from the environment (or a preset) like everywhere else
    docs = runner.invoke(
        app,
        [
            "search",
            "tumor",
            "--corpus",
            str(small_corpus),
            "--retriever",
            "bm25",
            "--unit",
            "document",
            "--json",
        ],
        env={"SCIERA_BM25__K1": "1.2"},
    )
    assert docs.exit_code == 0, docs.output
    ids = [item["doc_id"] for item in json.loads(docs.output)["items"]]
    assert len(ids) == len(set(ids)) > 0
    stale = runner.invoke(
        app, ["search", "tumor", "--corpus", str(small_corpus), "--retriever", "bm25"]
    )
    assert isinstance(stale.exception, StaleIndexError)
    assert "k1=1.2" in str(stale.exception)


def test_index_rejects_contradictory_flags(small_corpus):
    result = runner.invoke(
        app, ["index", "--corpus", str(small_corpus), "--bm25-only", "--dense-only"]
    )
    assert result.exit_code != 0


@pytest.mark.parametrize("command", ["search", "rerank", "ask"])
@pytest.mark.parametrize("query", ["", "   \t"])
def test_empty_query_is_a_one_line_error_before_any_work(small_corpus, command, query):
    import sciera.cli.ask_cmds
    import sciera.cli.rerank_cmds  # noqa: F401

    result = runner.invoke(app, [command, query, "--corpus", str(small_corpus)])
    assert isinstance(result.exception, ScieraError), result.output
    assert str(result.exception).startswith("the ") and "is empty" in str(result.exception)
