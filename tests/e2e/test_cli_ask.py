"""`sciera ask` end to end on a real SciFact slice with the real embedded 1.5B model.

The corpus is the first 300 SciFact abstracts (ingested and BM25-indexed in a tmp dir);
the claim's gold abstract (33370) is the BM25 top hit. tau 0 / top-k 1 make sure one
passage reaches generation, so every stage runs for real (DeepEra intent and grades, full
evidence, yes/no decision from choice probabilities: ``--no-verify``). The LLM response cache
lives in a fresh SCIERA_HOME (weights linked in), so the first run computes everything and
the second (text output) run reads the same replies from the cache. The default path, where
the shipped verifier decides, runs with ``--decision-only`` (no LLM prose; the combined
verdict reads the LLM's label probabilities).
"""

from __future__ import annotations

import json
import os
import subprocess
from pathlib import Path

import pytest
from train_cli import sciera_exe

pytestmark = [pytest.mark.e2e, pytest.mark.integration]

CLAIM = "TNFAIP3 is a tumor suppressor in glioblastoma."  # SciFact test claim 1137
GOLD = "33370"


@pytest.fixture(scope="module")
def env(fresh_home, tmp_path_factory: pytest.TempPathFactory) -> dict[str, str]:
    home = fresh_home(tmp_path_factory.mktemp("home"))
    return {**os.environ, "SCIERA_HOME": str(home), "HF_HUB_OFFLINE": "1"}


def test_sciera_ask_scifact(scifact_slice: Path, env: dict[str, str]) -> None:
    args = [sciera_exe(), "ask", CLAIM, "--corpus", str(scifact_slice), "--first-stage", "bm25"]
    # kept small for 2 CPU cores: 2 candidates, full passages, no yes/no explanation call
    args += ["--depth", "2", "--tau", "0", "--top-k", "1", "--evidence", "full"]
    args += ["--no-explain-yesno", "--no-verify"]
    run = subprocess.run(
        [*args, "--json", "--explain"], capture_output=True, text=True, timeout=900, env=env
    )
    assert run.returncode == 0, run.stderr
    out = json.loads(run.stdout)
    assert out["question_type"] == "yesno" and out["exact"][0] in {"yes", "no"}
    assert not out["insufficient"] and "degraded" not in out["trace"]
    info = out["trace"]["pipeline"]
    candidates = {r["passage_id"] for r in info["candidates"]}
    assert len(candidates) == 2 and f"{GOLD}#0" in candidates
    kept = [r["passage_id"] for r in info["candidates"] if r["kept"]]
    assert len(kept) == 1
    assert [e["passage_id"] for e in out["evidence"]] == kept
    assert out["evidence"][0]["summary"] == ""  # full passages
    # the decision read all the evidence, so it cites all of it
    assert [c["passage_id"] for c in out["citations"]] == kept
    assert info["compression_ratio"] == 1.0 and info["compression_ratio_candidates"] > 1.0
    assert out["text"] in {"Yes.", "No."}
    # the default scorer is the shipped cross-encoder; the intent only serves summaries,
    # and full passages have none, so no intent call was made
    assert info["rerank_trace"]["settings"]["scorer"] == "cross_encoder:scifact-minilm"
    assert info["rerank_trace"]["intent"] is None
    assert abs(sum(out["trace"]["probs"].values()) - 1.0) < 1e-6

    text = subprocess.run(args, capture_output=True, text=True, timeout=600, env=env)
    assert text.returncode == 0, text.stderr
    assert f"A: {out['text']}" in text.stdout
    assert "kept" in text.stdout and "filtered" in text.stdout
    assert f"[1] {kept[0]}" in text.stdout


def test_sciera_ask_decides_a_claim_with_the_shipped_verifier(
    scifact_slice: Path, env: dict[str, str]
) -> None:
    from sciera.corpus.store import PassageStore

    args = [sciera_exe(), "ask", CLAIM, "--corpus", str(scifact_slice), "--first-stage", "bm25"]
    run = subprocess.run(
        [*args, "--decision-only", "--json"], capture_output=True, text=True, timeout=600, env=env
    )
    assert run.returncode == 0, run.stderr
    out = json.loads(run.stdout)
    verdict = out["trace"]["verification"]
    label = verdict["label"]
    decision = {"SUPPORT": "yes", "CONTRADICT": "no"}.get(label, "maybe")
    assert out["question_type"] == "yesno" and out["exact"] == [decision]
    assert out["text"].startswith(decision.capitalize())
    # the evidence quotes rationale sentences verbatim from the stored abstracts, and each
    # citation names the sentences of its evidence record
    assert out["evidence"], "the verifier read the top abstracts: they are cited"
    with PassageStore.open(scifact_slice) as store:
        for e in out["evidence"]:
            doc = e["passage_id"].partition("#")[0]
            _, stored = store.sentences([doc])[doc]
            for r in e["rationales"]:
                assert r["doc_id"] == doc and stored[r["index"]] == r["text"]
        by_passage = {e["passage_id"]: e for e in out["evidence"]}
        for c in out["citations"]:
            quoted = {r["index"] for r in by_passage[c["passage_id"]]["rationales"]}
            assert set(c["sentences"]) <= quoted
