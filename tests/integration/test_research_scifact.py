"""`sciera.research.research` with the real 1.5B model on a real SciFact slice: the
grammar-constrained actions parse, the first search finds the claim's gold abstract, Q2Q
keeps the query's terms, and the run ends at a named stop with a cited, typed answer."""

from __future__ import annotations

from pathlib import Path

import pytest

from sciera.corpus.ingest import ingest
from sciera.research import ResearchOptions, research
from sciera.retrieve.build import build_indexes
from sciera.settings import load_settings

pytestmark = pytest.mark.integration

CLAIM = "TNFAIP3 is a tumor suppressor in glioblastoma."  # SciFact test claim 1137
GOLD = "33370"
STOPS = {"answer", "max_steps", "no_progress", "budget_tokens"}


@pytest.fixture(scope="module")
def corpus(scifact_dir: Path, tmp_path_factory: pytest.TempPathFactory) -> Path:
    root = tmp_path_factory.mktemp("research")
    lines = (scifact_dir / "corpus.jsonl").read_text(encoding="utf-8").splitlines()[:300]
    (root / "c.jsonl").write_text("\n".join(lines) + "\n", encoding="utf-8")
    ingest(root / "c.jsonl", root / "corpus", format="beir")
    build_indexes(root / "corpus", load_settings(), which=["bm25"])
    return root / "corpus"


def test_research_runs_real_turns_to_a_named_stop(corpus: Path, llm_1p5b, tmp_path: Path):
    run = research(
        CLAIM,
        corpus,
        llm=llm_1p5b,
        home=tmp_path,
        retrieve={"retriever": "bm25"},
        options=ResearchOptions(max_steps=3, q2q="q"),
    )
    assert run.stopped_by in STOPS, run.steps
    first = run.steps[0]
    assert first.action == "search" and not first.error  # the 1.5B's first turn is valid
    assert any(w in first.query.lower() for w in ("tnfaip3", "glioblastoma", "tumor"))
    assert run.search_calls >= 1 and any(f"{GOLD}#0" in s.result_ids for s in run.steps)
    assert run.answer.question_type == "yesno" and run.answer.text
    assert run.answer.trace["research"]["stopped_by"] == run.stopped_by
    assert run.prompt_tokens > 0 and all(s.prompt_tokens > 0 for s in run.steps)
