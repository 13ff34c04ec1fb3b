"""ResearchQA's judges with the real 1.5B on real PubMedQA questions: a rubric is built
(typed items from the grounding text and the question), the coverage judge scores the
reference answer above an answer that says nothing, and the pairwise judge's sanity cases
are all judged."""

from __future__ import annotations

from pathlib import Path

import pytest

from sciera.datasets.loaders import load_dataset
from sciera.eval.corruptions import NEUTRAL
from sciera.eval.judges.pairwise import PairwiseJudge
from sciera.eval.judges.rubric import RubricCoverageJudge, load_rubrics
from sciera.eval.rubrics import TYPES, RubricSpec, build_rubrics
from sciera.eval.sanity import long_reference, run_sanity

pytestmark = pytest.mark.integration


@pytest.fixture(scope="module")
def data(shared_data: Path):
    return load_dataset("pubmedqa", shared_data / "pubmedqa" / "pqal_dev.json", limit=1, seed=0)


def test_a_real_rubric_and_coverage_that_tells_an_answer_from_nothing(data, llm_1p5b, tmp_path):
    from sciera.embed.registry import create_embedder
    from sciera.settings import load_settings

    settings = load_settings(embed={"backend": "minilm"})
    embed = create_embedder(settings.embed, settings.home).embed_queries
    out = tmp_path / "rubrics.jsonl"
    stats = build_rubrics(data, llm_1p5b, embed, out, RubricSpec(per_source=3, keep=4))
    # how many items the LLM writes, and from which source, varies (llama.cpp's output
    # differs across CPUs): at least one to judge by, at most the spec keeps
    assert stats["questions"] == 1 and 1 <= stats["items"] <= 4, stats
    assert set(stats["by_source"]) <= {"grounded", "parametric"}
    assert set(stats["by_type"]) <= set(TYPES)
    [qid] = data.queries
    judge = RubricCoverageJudge(llm_1p5b, rubrics=load_rubrics(out))
    reference = judge.judge(data.queries[qid], "", long_reference(data, qid))
    nothing = judge.judge(data.queries[qid], "", NEUTRAL)
    assert not reference.failed and not nothing.failed
    assert reference.score > nothing.score, (reference.details, nothing.details)
    assert reference.details["items"] == stats["items"] and reference.model_id == llm_1p5b.model_id


def test_every_sanity_case_gets_a_two_order_verdict(data, llm_1p5b, tmp_path):
    summary = run_sanity(data, tmp_path / "s", pairwise=PairwiseJudge(llm_1p5b))
    pw = summary["pairwise"]
    assert summary["complete"] and pw["failed"] == 0
    assert pw["position_bias"]["battles"] == summary["cases"] >= 3
    assert 0.0 <= pw["harmful_accuracy"] <= 1.0 and pw["model_id"] == llm_1p5b.model_id
