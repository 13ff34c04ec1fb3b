"""A SciFact-format experiment through the one pipeline with the verify stage (oracle
setting: the cited abstracts are the pool): each question's SciFact prediction is logged,
the official metrics are scored from the log, and the ``verdict`` generator answers with
no LLM (stand-in selector and verdict models registered by name)."""

from __future__ import annotations

import json
from pathlib import Path

from sciera.eval.aggregate import aggregate
from sciera.eval.experiment import parse_experiment
from sciera.eval.runner import run_experiment
from sciera.eval.runstore import load_results
from sciera.settings import load_settings

SENTENCES = [
    {
        "doc_id": 11,
        "title": "Aspirin trial",
        "abstract": ["Aspirin lowered adenoma risk.", "Doses were low."],
        "structured": False,
    },
    {
        "doc_id": 12,
        "title": "Vitamin D",
        "abstract": ["Vitamin D was not associated with polyp risk.", "It was long."],
        "structured": False,
    },
]
CLAIMS = [
    {
        "id": 1,
        "claim": "Aspirin reduces adenoma risk.",
        "evidence": {"11": [{"sentences": [0], "label": "SUPPORT"}]},
        "cited_doc_ids": [11],
    },
    {
        "id": 2,
        "claim": "Vitamin D is associated with polyp risk.",
        "evidence": {"12": [{"sentences": [0], "label": "CONTRADICT"}]},
        "cited_doc_ids": [12],
    },
]


def write(folder: Path) -> Path:
    folder.mkdir(parents=True)
    (folder / "corpus_sentences.jsonl").write_text("".join(json.dumps(r) + "\n" for r in SENTENCES))
    (folder / "claims_train.jsonl").write_text("".join(json.dumps(r) + "\n" for r in CLAIMS))
    return folder


def test_verification_is_logged_and_scored_with_scifacts_metrics(tmp_path, registered):
    folder = write(tmp_path / "scifact")
    spec = {
        "name": "verify",
        "dataset": {"type": "scifact", "path": str(folder)},
        "metrics": ["abstract_label_only_f1", "sentence_label_f1"],
        "settings": {"verify": {"selector": "overlap", "verdict": "keyword", "abstracts": 2}},
        "repeats": 1,
        "pipelines": [
            {
                "name": "oracle",
                "retriever": "candidates",
                "verify": {"selector": "overlap", "verdict": "keyword", "abstracts": 2},
                "generator": "verdict",
            }
        ],
    }
    exp = parse_experiment(spec, "verify.yaml")
    settings = load_settings(home=tmp_path / "home", **exp.settings)
    out = tmp_path / "out"
    run_experiment(exp, out, settings=settings, llm_factory=lambda s, i: None)
    results = load_results(out)
    recs = results.records["oracle"][0]
    assert recs["1"]["verification"] == {
        "id": 1,
        "evidence": {"11": {"label": "SUPPORT", "sentences": [0]}},
    }
    assert recs["2"]["verification"]["evidence"]["12"]["label"] == "CONTRADICT"
    assert recs["1"]["answer"]["exact"] == ["yes"] and recs["2"]["answer"]["exact"] == ["no"]
    [row] = aggregate(results)
    cells = {c: v.mean for c, v in row.cells.items()}
    assert cells["abstract_label_only_f1"] == 1.0 and cells["sentence_label_f1"] == 1.0
