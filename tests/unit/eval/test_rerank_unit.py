"""A pipeline's ``rerank_unit`` on a dataset judged per document: 'document' gives the
reranker the first stage's top documents, each as its best passage (Max-P), as
``sciera eval retrieval --unit document --reranker`` does; 'passage' its top passages.
A tiny BEIR collection whose first document is cut into two passages, BM25, and the LLM
pointwise reranker on a scripted LLM."""

from __future__ import annotations

import json
from pathlib import Path

from tiny_corpus import bm25_corpus

from fakes import ScriptedLLM
from sciera.eval.experiment import parse_experiment
from sciera.eval.runner import run_experiment

LONG = " ".join(["aspirin stroke prevention trial outcome"] * 70)  # 350 words: two passages


def collection(root: Path) -> Path:
    folder = root / "beir"
    (folder / "qrels").mkdir(parents=True)
    (folder / "queries.jsonl").write_text(json.dumps({"_id": "q1", "text": "aspirin stroke"}))
    (folder / "qrels" / "test.tsv").write_text("query-id\tcorpus-id\tscore\nq1\tb\t1\n")
    return folder


def test_document_unit_reranks_the_top_documents_not_passages(tmp_path: Path) -> None:
    corpus = bm25_corpus(
        tmp_path,
        [("a", "", LONG), ("b", "", "aspirin and stroke"), ("c", "", "unrelated galaxies")],
    )
    pipes = [
        {
            "name": unit,
            "retriever": "bm25",
            "depth": 2,
            "reranker": "llm_pointwise",
            "rerank_depth": 2,
            "rerank_unit": unit,
        }
        for unit in ("passage", "document")
    ]
    spec = {
        "name": "unit",
        "dataset": {"type": "beir", "path": str(collection(tmp_path))},
        "corpus": str(corpus),
        "metrics": ["hit@1"],
        "repeats": 1,
        "pipelines": pipes,
    }
    llm = ScriptedLLM(default_probs={"yes": 0.5, "no": 0.5}).on(
        "aspirin and stroke", probs={"yes": 0.9, "no": 0.1}
    )
    run_experiment(
        parse_experiment(spec, "unit.yaml"), tmp_path / "out", llm_factory=lambda s, i: llm
    )
    rec = {}
    for unit in ("passage", "document"):
        line = (tmp_path / "out" / "runs" / unit / "r0" / "results.jsonl").read_text()
        rec[unit] = json.loads(line)
    # the top 2 passages are both of "a": the passage pipeline never sees "b"
    assert rec["passage"]["rerank_input"] == 1
    assert [d for d, _ in rec["passage"]["reranked"]] == ["a"]
    # the top 2 documents are "a" and "b": the reranker puts the judged one first
    assert rec["document"]["rerank_input"] == 2
    assert [d for d, _ in rec["document"]["reranked"]] == ["b", "a"]
