"""The research agent as an experiment pipeline (`agent:` in `sciera eval run`): what it
logs, the metrics read from it (evidence recall over all searches, search calls,
completion), paired comparisons against a single-shot pipeline, and the spec's checks."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from research_script import Q, act, agent_llm, search

from sciera.errors import ScieraError
from sciera.eval.aggregate import aggregate
from sciera.eval.compare import compare_pipelines
from sciera.eval.experiment import parse_experiment
from sciera.eval.report import write_report
from sciera.eval.runner import run_experiment
from sciera.eval.runstore import load_results

Q1 = "vitamin deficiency multiple sclerosis"
Q2 = "sunlight exposure cutaneous synthesis"
QUESTION = Q  # an "ideal" question: the script answers its prompt


@pytest.fixture
def beir_set(tmp_path: Path) -> Path:
    """One question whose evidence is spread over v1 and s1 (two documents)."""
    folder = tmp_path / "set"
    (folder / "qrels").mkdir(parents=True)
    (folder / "queries.jsonl").write_text(json.dumps({"_id": "q1", "text": QUESTION}) + "\n")
    (folder / "qrels" / "test.tsv").write_text("query-id\tcorpus-id\tscore\nq1\tv1\t1\nq1\ts1\t1\n")
    return folder


def experiment(beir_set: Path, corpus: Path, pipelines: list[dict]):
    spec = {
        "name": "research",
        "dataset": {"type": "beir", "path": str(beir_set)},
        "corpus": str(corpus),
        "settings": {"retrieve": {"retriever": "bm25"}, "filter": {"top_k": 2}},
        "metrics": ["evidence_recall", "recall@5", "search_calls", "completion"],
        "repeats": 1,
        "pipelines": pipelines,
    }
    return parse_experiment(spec, "exp.yaml")


AGENT = {"name": "agent", "retriever": "bm25", "agent": "research", "agent_params": {"k": 1}}


def run(exp, out: Path, replies: list[list[str]], tmp_path: Path):
    """``replies``: one script per pipeline with an LLM, in the experiment's order."""
    llms = []

    def factory(settings, seed):
        llms.append(agent_llm(*replies[len(llms)]))
        return llms[-1]

    from sciera.settings import load_settings

    settings = load_settings(home=tmp_path / "home", **exp.settings)
    run_experiment(exp, out, settings=settings, llm_factory=factory)
    return load_results(out), llms


def test_an_agent_pipeline_logs_every_search_and_is_scored_over_all_of_them(
    corpus, beir_set, tmp_path
):
    exp = experiment(beir_set, corpus, [AGENT])
    out = tmp_path / "out"
    results, _ = run(exp, out, [[search(Q1), search(Q2), act("answer")]], tmp_path)
    rec = results.records["agent"][0]["q1"]
    assert [d for d, _ in rec["first"]] == ["v1", "s1"]  # one passage per search (k=1)
    assert rec["agent"] == {
        "search_calls": 2,
        "steps": 3,
        "distinct_queries": 2,
        "stopped_by": "answer",
    }
    assert [s["action"] for s in rec["trace"]] == ["search", "search", "answer"]
    assert rec["answer"]["citations"] and rec["cost"]["agent"]["prompt_tokens"] > 0
    [row] = aggregate(results)
    cells = {c: v.mean for c, v in row.cells.items()}
    assert cells["evidence_recall"] == 1.0 and cells["recall@5"] == 1.0
    assert cells["search_calls"] == 2.0 and cells["completion"] == 1.0
    assert cells["s/q agent"] > 0 and cells["tok/q"] > 0
    traces = (out / "runs" / "agent" / "r0" / "traces.jsonl").read_text().splitlines()
    assert json.loads(traces[0])["trace"][0]["query"] == Q1
    assert "v1" in (out / "runs" / "agent" / "r0" / "run.trec").read_text()
    write_report(out, plots=False)  # the report takes the new columns
    assert "search_calls" in (out / "report" / "table.md").read_text()


def test_a_run_a_limit_ended_counts_as_incomplete_and_recall_is_what_was_seen(
    corpus, beir_set, tmp_path
):
    params = {**AGENT, "agent_params": {"k": 1, "max_steps": 1}}
    exp = experiment(beir_set, corpus, [params])
    results, _ = run(exp, tmp_path / "out", [[search(Q1), search(Q2)]], tmp_path)
    [row] = aggregate(results)
    cells = {c: v.mean for c, v in row.cells.items()}
    assert cells["completion"] == 0.0 and cells["search_calls"] == 1.0
    assert cells["evidence_recall"] == 0.5  # s1 was never retrieved
    assert results.records["agent"][0]["q1"]["agent"]["stopped_by"] == "max_steps"


def test_single_shot_against_the_agent_question_by_question(corpus, beir_set, tmp_path):
    single = {"name": "single", "retriever": "bm25", "depth": 1}
    exp = experiment(beir_set, corpus, [single, AGENT])
    replies = [[search(Q1), search(Q2), act("answer")]]
    results, llms = run(exp, tmp_path / "out", replies, tmp_path)
    assert len(llms) == 1  # the single-shot pipeline has no LLM
    by_metric = {c.metric: c for c in compare_pipelines(results)}
    assert by_metric["search_calls"].baseline_mean == 1.0 and by_metric["search_calls"].mean == 2
    assert by_metric["evidence_recall"].baseline_mean == 0.5
    assert by_metric["evidence_recall"].mean == 1.0 and by_metric["evidence_recall"].test.n == 1
    assert "completion" not in by_metric  # the single-shot pipeline gives no answer


@pytest.mark.parametrize(
    ("pipeline", "message"),
    [
        ({**AGENT, "reranker": "bm25"}, "pipelines[0]: reranker: an agent pipeline has its own"),
        ({**AGENT, "retriever": "candidates"}, "an agent searches a corpus"),
        ({**AGENT, "agent_params": {"steps": 3}}, "unknown agent parameter 'steps'"),
        ({**AGENT, "agent_params": {"depth": 30}}, "agent_params: --depth must be one of"),
        ({**AGENT, "agent": "oracle"}, "unknown agent 'oracle' (choose from research)"),
        (
            {**AGENT, "agent_params": {"question_type": "essay"}},
            "agent_params: question_type: unknown question type 'essay'",
        ),
        ({"name": "x", "agent_params": {"k": 1}}, "agent_params: given without an agent"),
    ],
)
def test_bad_agent_pipelines_are_one_line_errors(corpus, beir_set, pipeline, message):
    with pytest.raises(ScieraError) as err:
        experiment(beir_set, corpus, [pipeline])
    assert message in str(err.value) and "\n" not in str(err.value)


def test_an_agent_on_a_typed_dataset_is_scored_on_its_exact_answer(corpus, tmp_path):
    """PubMedQA in the open setting: the agent searches the corpus, its yes/no answer is
    scored against the gold decision (accuracy, macro-F1) beside single-shot `ask`."""
    question = "Vitamin D deficiency and multiple sclerosis: is there a link?"  # auto: ideal
    item = {"QUESTION": question, "CONTEXTS": ["x"], "final_decision": "yes", "LONG_ANSWER": "Yes."}
    path = tmp_path / "pqal.json"
    path.write_text(json.dumps({"v1": item}))
    spec = {
        "name": "research_pubmedqa",
        "dataset": {"type": "pubmedqa", "path": str(path), "unit": "document"},
        "corpus": str(corpus),
        "settings": {"retrieve": {"retriever": "bm25"}, "filter": {"top_k": 2}},
        "metrics": ["yesno_accuracy", "macro_f1", "evidence_recall", "search_calls"],
        "repeats": 1,
        "pipelines": [
            {"name": "ask", "retriever": "bm25", "depth": 2, "generator": "llm"},
            {**AGENT, "agent_params": {"k": 1, "question_type": "yesno"}},
        ],
    }
    spec["pipelines"][0]["generator_params"] = {"question_type": "yesno"}
    exp = parse_experiment(spec, "exp.yaml")
    decisions = iter([{"yes": 0.2, "no": 0.8}, {"yes": 0.9, "no": 0.1}])  # ask, then agent

    def factory(settings, seed):
        llm = agent_llm(search(Q1), act("answer"))
        llm.on("Answer with exactly one word", probs=next(decisions))
        return llm.on("explain the answer", {"explanation": "Deficiency raises it [1]."})

    from sciera.settings import load_settings

    settings = load_settings(home=tmp_path / "home", **exp.settings)
    run_experiment(exp, tmp_path / "out", settings=settings, llm_factory=factory)
    results = load_results(tmp_path / "out")
    rec = results.records["agent"][0]["v1"]
    assert rec["answer"]["question_type"] == "yesno" and rec["answer"]["exact"] == ["yes"]
    assert rec["agent"]["search_calls"] == 1 and rec["first"][0][0] == "v1"
    rows = {r.pipeline: {c: v.mean for c, v in r.cells.items()} for r in aggregate(results)}
    assert rows["agent"]["yesno_accuracy"] == 1.0 and rows["ask"]["yesno_accuracy"] == 0.0
    assert rows["agent"]["evidence_recall"] == 1.0  # the question's own abstract was found
    by_metric = {c.metric: c for c in compare_pipelines(results)}
    assert by_metric["yesno_accuracy"].mean == 1.0 and by_metric["yesno_accuracy"].test.n == 1
