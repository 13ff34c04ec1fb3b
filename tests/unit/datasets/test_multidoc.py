"""`sciera dataset multidoc`: questions whose judged evidence spans several documents,
written as a BEIR folder the experiment runner reads, with its construction recorded."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from sciera.corpus.ingest import ingest
from sciera.datasets.beir import load_beir
from sciera.datasets.multidoc import MultiDocSpec, build_multidoc
from sciera.errors import ScieraError

QRELS = {  # question -> {doc: grade}
    "q1": {"d1": 1},  # one document: too few
    "q2": {"d1": 1, "d2": 2},
    "q3": {"d1": 2, "d2": 2, "d3": 2, "d4": 1},  # four of grade >= 1, three of grade 2
    "q4": {"d1": 1, "d9": 1},  # d9 is not in the corpus
    "q5": {"d2": 0, "d3": 0},  # judged non-relevant only
}


def beir_folder(root: Path) -> Path:
    (root / "qrels").mkdir(parents=True)
    rows = "".join(f"{q}\t{d}\t{g}\n" for q, docs in QRELS.items() for d, g in docs.items())
    (root / "qrels" / "test.tsv").write_text("query-id\tcorpus-id\tscore\n" + rows)
    queries = "".join(json.dumps({"_id": q, "text": f"question {q}?"}) + "\n" for q in QRELS)
    (root / "queries.jsonl").write_text(queries)
    return root


def kept(out: Path) -> dict[str, set[str]]:
    data = load_beir(out)
    return {q: set(d) for q, d in data.qrels.items()}


def test_keeps_questions_with_two_to_max_relevant_documents(tmp_path):
    src = beir_folder(tmp_path / "src")
    built = build_multidoc(MultiDocSpec(queries=src, max_docs=3), tmp_path / "out", "cmd")
    assert kept(tmp_path / "out") == {"q2": {"d1", "d2"}, "q4": {"d1", "d9"}}
    assert built["counts"] == {
        "judged_questions": 5,
        "dropped_too_few_documents": 2,
        "dropped_too_many_documents": 1,
        "eligible": 2,
        "kept": 2,
    }
    assert built["relevant_documents"] == {"total": 4, "per_question": {"2": 2}}
    written = json.loads((tmp_path / "out" / "construction.json").read_text())
    assert written["command"] == "cmd" and len(written["sources"]["qrels"]["sha256"]) == 64
    assert load_beir(tmp_path / "out").queries["q2"] == "question q2?"


def test_grade_threshold_and_documents_missing_from_the_corpus(tmp_path):
    src = beir_folder(tmp_path / "src")
    docs = tmp_path / "docs.jsonl"
    ids = ("d1", "d2", "d3", "d4")
    docs.write_text("".join(json.dumps({"_id": d, "text": f"text of {d}"}) + "\n" for d in ids))
    ingest(docs, tmp_path / "corpus", format="beir")
    spec = MultiDocSpec(queries=src, min_grade=2, corpus=tmp_path / "corpus")
    built = build_multidoc(spec, tmp_path / "out")
    assert kept(tmp_path / "out") == {"q3": {"d1", "d2", "d3"}}  # d4 has grade 1
    assert built["counts"]["relevant_documents_not_in_corpus"] == 0  # d9 is grade 1
    spec = MultiDocSpec(queries=src, corpus=tmp_path / "corpus")
    built = build_multidoc(spec, tmp_path / "out")
    assert "q4" not in kept(tmp_path / "out")  # only d1 is left of its two
    assert built["counts"]["relevant_documents_not_in_corpus"] == 1


def test_tsv_queries_with_trec_qrels_and_a_seeded_sample(tmp_path):
    (tmp_path / "q.tsv").write_text("".join(f"{q}\tquestion {q}\n" for q in QRELS))
    trec = "".join(f"{q} 0 {d} {g}\n" for q, docs in QRELS.items() for d, g in docs.items())
    (tmp_path / "q.qrel").write_text(trec)
    spec = MultiDocSpec(queries=tmp_path / "q.tsv", qrels=tmp_path / "q.qrel", limit=1, seed=3)
    first = build_multidoc(spec, tmp_path / "a")
    build_multidoc(spec, tmp_path / "b")
    assert first["counts"]["eligible"] == 3 and first["counts"]["kept"] == 1
    assert kept(tmp_path / "a") == kept(tmp_path / "b")  # same seed, same sample


@pytest.mark.parametrize(
    ("kwargs", "message"),
    [
        ({"min_docs": 5}, "no question has 5..10 relevant documents"),
        ({"max_docs": 1}, "--max-docs 1 is below --min-docs 2"),
        ({"limit": 0}, "--limit must be at least 1"),
    ],
)
def test_bad_specs_are_one_line_errors(tmp_path, kwargs, message):
    src = beir_folder(tmp_path / "src")
    with pytest.raises(ScieraError, match=message.replace(".", r"\.")):
        build_multidoc(MultiDocSpec(queries=src, **kwargs), tmp_path / "out")


def test_a_queries_file_needs_its_qrels_and_bad_tsv_lines_are_named(tmp_path):
    (tmp_path / "q.tsv").write_text("q1\tquestion one\nq2 has no tab\n")
    with pytest.raises(ScieraError, match="--qrels is needed"):
        build_multidoc(MultiDocSpec(queries=tmp_path / "q.tsv"), tmp_path / "out")
    (tmp_path / "q.qrel").write_text("q1 0 d1 1\n")
    spec = MultiDocSpec(queries=tmp_path / "q.tsv", qrels=tmp_path / "q.qrel")
    with pytest.raises(ScieraError, match=r"q\.tsv:2: text: expected id<TAB>text"):
        build_multidoc(spec, tmp_path / "out")
