"""The full-text questions dataset (``type: fulltext``) on a real JATS article of the shared
data: judgments are the passages holding each gold sentence, read from the corpus; and an
experiment over it whose second pipeline keeps Methods and Results alone (a pipeline's own
``settings:``)."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from tiny_corpus import fulltext_corpus

from sciera.corpus import PassageStore
from sciera.corpus.fulltext.sections import section_kinds
from sciera.datasets.fulltext import load_fulltext
from sciera.datasets.loaders import load_dataset
from sciera.errors import InputError, ScieraError
from sciera.eval.experiment import parse_experiment
from sciera.eval.runner import run_experiment

REPO = Path(__file__).resolve().parents[3]
QUESTIONS = REPO / "benchmarks" / "experiments" / "fulltext_questions.jsonl"
PAPER = "10.1186/1471-2180-11-174"


@pytest.fixture(scope="module")
def corpus(tmp_path_factory: pytest.TempPathFactory) -> Path:
    return fulltext_corpus(tmp_path_factory.mktemp("ft"), ["1471-2180-11-174.nxml"])


def questions(tmp_path: Path, *extra: dict) -> Path:
    """The shipped questions about PAPER (ft1, ft2: both Methods), and ``extra``."""
    lines = [q for q in QUESTIONS.read_text().splitlines() if PAPER in q]
    assert len(lines) == 2
    path = tmp_path / "questions.jsonl"
    path.write_text("\n".join([*lines, *(json.dumps(e) for e in extra)]) + "\n")
    return path


def test_judgments_are_the_passages_holding_the_gold_sentence(tmp_path: Path, corpus: Path) -> None:
    data = load_fulltext(questions(tmp_path), corpus=corpus)
    assert data.unit == "passage"
    assert sorted(data.queries) == ["ft1", "ft2"]
    records = [json.loads(line) for line in QUESTIONS.read_text().splitlines() if line]
    gold = {q["id"]: q["gold"] for q in records}
    with PassageStore.open(corpus) as store:
        for qid, judged in data.qrels.items():
            assert judged and set(judged.values()) == {1}
            for passage in store.get_passages(list(judged)):
                assert passage.doc_id == PAPER and gold[qid] in passage.text
                assert "methods" in section_kinds(passage.section)
    # the registry reaches it with the corpus; a section kind as the split
    assert load_dataset("fulltext", questions(tmp_path), corpus=corpus).qrels == data.qrels
    assert load_fulltext(questions(tmp_path), split="results", corpus=corpus).queries == {}


def test_a_gold_sentence_no_passage_holds_and_a_missing_corpus_are_errors(
    tmp_path: Path, corpus: Path
) -> None:
    other = {
        "id": "x1",
        "question": "q?",
        "doc_id": PAPER,
        "section": "results",
        "gold": "Not there.",
    }
    with pytest.raises(ScieraError, match=r"question x1: no passage of .* holds its gold sentence"):
        load_fulltext(questions(tmp_path, other), corpus=corpus)
    with pytest.raises(ScieraError, match="judged in a corpus"):
        load_fulltext(questions(tmp_path))
    bad = {"id": "x2", "question": "q?", "doc_id": PAPER, "section": "methods"}
    with pytest.raises(InputError, match="gold"):
        load_fulltext(questions(tmp_path, bad), corpus=corpus)


def test_an_experiment_with_a_section_filtered_pipeline(tmp_path: Path, corpus: Path) -> None:
    spec = {
        "name": "ft",
        "dataset": {"type": "fulltext", "path": str(questions(tmp_path))},
        "corpus": str(corpus),
        "metrics": ["hit@1", "hit@5", "mrr@10"],
        "pipelines": [
            {"name": "all", "retriever": "bm25", "depth": 10},
            {
                "name": "methods",
                "retriever": "bm25",
                "depth": 10,
                "settings": {"retrieve": {"sections": ["methods"]}},
            },
        ],
    }
    exp = parse_experiment(spec, "unit.yaml")
    run_experiment(exp, tmp_path / "out")
    ranked = {}
    for name in ("all", "methods"):
        lines = (tmp_path / "out" / "runs" / name / "r0" / "results.jsonl").read_text().split("\n")
        recs = [json.loads(line) for line in lines if line]
        ranked[name] = {r["qid"]: [pid for pid, _ in r["first"]] for r in recs}
    with PassageStore.open(corpus) as store:
        kinds = {
            pid: section_kinds(p.section)
            for pid, p in store.find_passages(
                [pid for ids in ranked["all"].values() for pid in ids]
            ).items()
        }
        kept = store.find_passages([pid for ids in ranked["methods"].values() for pid in ids])
    assert any("methods" not in k for k in kinds.values())  # the unfiltered list has others
    assert kept and all("methods" in section_kinds(p.section) for p in kept.values())
