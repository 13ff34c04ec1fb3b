"""One pipeline, four surfaces: `sciera ask`, `sciera eval run` with the same settings, the
server's `/v1/ask` and the research agent's final answer step give the same answer to the
same question (a scripted LLM; the agent searches once, with the question itself)."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from click.testing import CliRunner
from fastapi.testclient import TestClient
from research_script import ANSWER, act, agent_llm, search

from fakes import ScriptedLLM
from sciera.eval.experiment import parse_experiment
from sciera.eval.runner import run_experiment
from sciera.eval.runstore import load_results
from sciera.research import ResearchOptions, research
from sciera.serve.app import create_app
from sciera.settings import load_settings

Q = "How do vitamin D deficiency, sunlight exposure and curcumin bear on multiple sclerosis?"
TOP_K = 2  # of the three documents the question's words reach
SECTIONS = {
    "retrieve": {"retriever": "bm25"},
    "rerank": {"reranker": "none", "depth": 5},
    "filter": {"top_k": TOP_K},
    "answer": {"evidence": "full"},
}


REPLY = "MS risk rises [1]; sun makes it [2]."


def answer_llm() -> ScriptedLLM:
    """The answer step's replies alone (the surfaces that do not search by themselves)."""
    return ScriptedLLM().on(ANSWER, {"answer": REPLY})


def same(answer: dict) -> tuple:
    """What must agree: the text, its type, the exact answer, what is cited, the evidence."""
    return (
        answer["text"],
        answer["question_type"],
        answer["exact"],
        [c["passage_id"] for c in answer["citations"]],
        [e["passage_id"] for e in answer["evidence"]],
    )


@pytest.fixture
def answers(corpus: Path, tmp_path: Path, monkeypatch) -> dict[str, tuple]:
    home = tmp_path / "home"
    monkeypatch.setenv("SCIERA_HOME", str(home))
    settings = load_settings(home=home, **SECTIONS)
    out: dict[str, tuple] = {}

    # sciera ask (the CLI, its --json)
    import typer

    import sciera.llm.registry
    from sciera.cli import app, ask_cmds  # noqa: F401  (registers the command)

    monkeypatch.setattr(sciera.llm.registry, "make_llm", lambda s: answer_llm())
    args = ["ask", Q, "--corpus", str(corpus), "--json", "--first-stage", "bm25"]
    args += ["--reranker", "none", "--depth", "5", "--top-k", str(TOP_K), "--evidence", "full"]
    result = CliRunner().invoke(typer.main.get_group(app), args)
    assert result.exit_code == 0, result.output
    out["ask"] = same(json.loads(result.output))

    # the server's /v1/ask
    app_ = create_app({"tiny": corpus}, settings, llm_factory=lambda s: answer_llm())
    with TestClient(app_) as client:
        r = client.post("/v1/ask", json={"question": Q})
    assert r.status_code == 200, r.text
    out["serve"] = same(r.json())

    # sciera eval run, the same pipeline as an experiment's
    folder = tmp_path / "set"
    (folder / "qrels").mkdir(parents=True)
    (folder / "queries.jsonl").write_text(json.dumps({"_id": "q1", "text": Q}) + "\n")
    (folder / "qrels" / "test.tsv").write_text("query-id\tcorpus-id\tscore\nq1\tv1\t1\n")
    pipe = {"name": "ask", "retriever": "bm25", "depth": 5, "filter": {"top_k": TOP_K}}
    pipe |= {"evidence": "full", "generator": "llm"}
    spec = {
        "name": "one",
        "dataset": {"type": "beir", "path": str(folder)},
        "corpus": str(corpus),
        "settings": SECTIONS,
        "metrics": ["recall@5"],
        "repeats": 1,
        "pipelines": [pipe],
    }
    exp = parse_experiment(spec, "one.yaml")
    run_experiment(exp, tmp_path / "out", settings=settings, llm_factory=lambda s, i: answer_llm())
    rec = load_results(tmp_path / "out").records["ask"][0]["q1"]
    out["eval"] = same({**rec["answer"]})

    # the research agent: one search with the question, then its answer step
    llm = agent_llm(search(Q), act("answer"), answer=REPLY)
    run = research(Q, corpus, llm=llm, options=ResearchOptions(k=5, top_k=TOP_K), **SECTIONS)
    assert run.stopped_by == "answer" and run.search_calls == 1
    from sciera.pipeline import answer_json

    out["research"] = same(answer_json(run.answer))
    return out


def test_ask_eval_serve_and_the_agent_answer_alike(answers: dict[str, tuple]) -> None:
    assert answers["ask"][0] and answers["ask"][3]  # a real answer, cited
    assert len(answers["ask"][4]) == TOP_K  # the filter cut the three candidates
    assert answers["ask"] == answers["serve"] == answers["eval"] == answers["research"]
