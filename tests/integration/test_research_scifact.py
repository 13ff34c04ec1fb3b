"""`sciera.research.research` with the real 1.5B model on a real SciFact slice: the
grammar-constrained actions parse, the first search finds the claim's gold abstract, Q2Q
keeps the query's terms, and the run ends at a named stop with a cited, typed answer."""

from __future__ import annotations

from pathlib import Path

import pytest

from sciera.research import ResearchOptions, research

pytestmark = pytest.mark.integration

CLAIM = "TNFAIP3 is a tumor suppressor in glioblastoma."  # SciFact test claim 1137
GOLD = "33370"
STOPS = {"answer", "max_steps", "no_progress", "budget_tokens"}


@pytest.fixture(scope="module")
def corpus(scifact_slice: Path) -> Path:
    return scifact_slice


def test_research_runs_real_turns_to_a_named_stop(corpus: Path, llm_1p5b, tmp_path: Path):
    run = research(
        CLAIM,
        corpus,
        llm=llm_1p5b,
        home=tmp_path,
        retrieve={"retriever": "bm25"},
        options=ResearchOptions(max_steps=1, q2q="q"),  # one real turn: CI time
    )
    assert run.stopped_by in STOPS, run.steps
    first = run.steps[0]
    assert first.action == "search" and not first.error  # the 1.5B's first turn is valid
    assert any(w in first.query.lower() for w in ("tnfaip3", "glioblastoma", "tumor"))
    assert run.search_calls >= 1 and any(f"{GOLD}#0" in s.result_ids for s in run.steps)
    assert run.answer.question_type == "yesno" and run.answer.text
    assert run.answer.trace["research"]["stopped_by"] == run.stopped_by
    assert run.prompt_tokens > 0 and all(s.prompt_tokens > 0 for s in run.steps)
