"""`sciera.ask` through the Python API with the real 1.5B model on a real SciFact slice,
with EviOmni rational evidence (DeepEra reranks without filtering: tau 0, top-k 2) and the
LLM's own yes/no decision (the verifier off: tests/e2e/test_cli_ask.py covers its decisions)."""

from __future__ import annotations

from pathlib import Path

import pytest

import sciera
from sciera.generate.base import exact_answer
from sciera.types import Answer

pytestmark = pytest.mark.integration

CLAIM = "TNFAIP3 is a tumor suppressor in glioblastoma."  # SciFact test claim 1137
GOLD = "33370"


@pytest.fixture(scope="module")
def corpus(scifact_slice: Path) -> Path:
    return scifact_slice


def test_ask_with_rational_evidence(corpus: Path, llm_1p5b, tmp_path: Path) -> None:
    a = sciera.ask(
        CLAIM,
        corpus,
        llm=llm_1p5b,
        home=tmp_path,
        retrieve={"retriever": "bm25"},
        rerank={"depth": 2},
        filter={"top_k": 2, "tau": 0.0},
        verify={"enabled": False},
        answer={"evidence": "rational", "passage_words": 120, "refuse_on_insufficient": False},
    )
    assert isinstance(a, Answer) and a.question_type == "yesno"
    info = a.trace["pipeline"]
    assert info["evidence_extractor"] == "rational"
    assert "parse_error" not in info["evidence_trace"], info["evidence_trace"]["raw"]
    assert info["evidence_trace"]["reason"]  # the rationale was written
    assert a.evidence, info["evidence_trace"]["extract"]
    candidates = {r["passage_id"] for r in info["candidates"]}
    assert f"{GOLD}#0" in candidates
    assert {e.passage.passage_id for e in a.evidence} <= candidates
    assert {c.passage_id for c in a.citations} <= {e.passage.passage_id for e in a.evidence}
    assert info["compression_ratio"] > 1.0
    assert exact_answer(a)[0] in {"yes", "no"}
