"""SciFact-format claims as an experiment dataset: open and oracle settings from one file."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from sciera.corpus import PassageStore, ingest
from sciera.datasets import load_dataset
from sciera.errors import InputError, ScieraError
from sciera.eval.metrics import evaluate_verification

CORPUS = [
    {"doc_id": 11, "title": "A", "abstract": ["A zero.", "A one.", "A two."], "structured": False},
    {"doc_id": 15, "title": "B", "abstract": ["B zero.", "B one.   \n"], "structured": False},
    {"doc_id": 16, "title": "C", "abstract": ["C zero."], "structured": False},
]
CLAIMS = [
    {
        "id": 52,
        "claim": "A claim with evidence.",
        "evidence": {
            "11": [
                {"sentences": [0, 1], "label": "SUPPORT"},
                {"sentences": [2], "label": "SUPPORT"},
            ],
            "15": [{"sentences": [1], "label": "SUPPORT"}],
        },
        "cited_doc_ids": [11, 15],
    },
    {"id": 3, "claim": "An NEI claim.", "evidence": {}, "cited_doc_ids": [16]},
]


def write(folder: Path, claims: list[dict], corpus: list[dict] | None = CORPUS) -> Path:
    folder.mkdir(exist_ok=True)
    lines = "\n".join(json.dumps(c) for c in claims) + "\n"
    (folder / "claims_train.jsonl").write_text(lines, encoding="utf-8")
    if corpus is not None:
        text = "\n".join(json.dumps(d) for d in corpus) + "\n"
        (folder / "corpus_sentences.jsonl").write_text(text, encoding="utf-8")
    return folder


def test_claims_judgments_gold_and_oracle_pool(tmp_path: Path) -> None:
    data = load_dataset("scifact", write(tmp_path / "sf", CLAIMS))
    assert data.name == "scifact/claims_train" and data.unit == "document"
    assert data.queries == {"3": "An NEI claim.", "52": "A claim with evidence."}
    assert data.qrels == {"3": {"16": 1}, "52": {"11": 1, "15": 1}}  # cited, as BEIR
    assert data.claims["52"].evidence["11"].label == "SUPPORT"
    assert data.claims["3"].evidence == {}
    assert [p.passage_id for p in data.candidates["52"]] == ["11#0", "15#0"]
    assert data.sentences["52"] == {
        "11": ("A", ("A zero.", "A one.", "A two.")),
        "15": ("B", ("B zero.", "B one.   \n")),  # verbatim
    }
    assert data.labels == {} and data.answers == {}
    # gold verification as predictions scores 1 on every official metric
    preds = [{"id": 52, "evidence": {"11": {"label": "SUPPORT", "sentences": [2]}}}]
    got = evaluate_verification(data.claims.values(), preds, ["abstract_rationalized_precision"])
    assert got == {"abstract_rationalized_precision": 1.0}


def test_oracle_pool_is_what_ingest_stores(tmp_path: Path) -> None:
    folder = write(tmp_path / "sf", CLAIMS)
    data = load_dataset("scifact", folder)
    ingest(folder / "corpus_sentences.jsonl", tmp_path / "corpus")
    with PassageStore.open(tmp_path / "corpus") as store:
        for qid, pool in data.candidates.items():
            assert list(pool) == store.get_passages([p.passage_id for p in pool])
            docs = list(data.sentences[qid])
            stored = store.sentences(docs)
            assert {d: (t, tuple(s)) for d, (t, s) in stored.items()} == data.sentences[qid]


def test_without_a_sentence_corpus_only_the_open_setting(tmp_path: Path) -> None:
    data = load_dataset("scifact", write(tmp_path / "sf", CLAIMS, corpus=None))
    assert not data.has_candidates and data.sentences == {}
    assert set(data.claims) == {"3", "52"}


def test_file_path_split_and_subset(tmp_path: Path) -> None:
    folder = write(tmp_path / "sf", CLAIMS)
    file = folder / "claims_train.jsonl"
    assert load_dataset("scifact", file).queries == load_dataset("scifact", folder).queries
    with pytest.raises(ScieraError, match="applies to a folder"):
        load_dataset("scifact", file, split="dev")
    with pytest.raises(ScieraError, match=r"claims_dev\.jsonl: no such file"):
        load_dataset("scifact", folder, split="dev")
    one = load_dataset("scifact", folder, limit=1, seed=1)
    assert set(one.claims) == set(one.queries) == set(one.sentences) == set(one.candidates)


def test_input_key_follows_the_gold_verification(tmp_path: Path) -> None:
    before = load_dataset("scifact", write(tmp_path / "a", CLAIMS)).input_key("52")
    changed = json.loads(json.dumps(CLAIMS))
    changed[0]["evidence"]["15"][0]["label"] = "CONTRADICT"
    after = load_dataset("scifact", write(tmp_path / "b", changed)).input_key("52")
    assert before != after


@pytest.mark.parametrize(
    ("edit", "field", "problem"),
    [
        ({"cited_doc_ids": [11, 15, 99]}, "cited_doc_ids", "99 is not in"),
        ({"cited_doc_ids": [11]}, "evidence", "['15'] are not cited"),
        ({"cited_doc_ids": []}, "cited_doc_ids", "empty"),
        ({"claim": " "}, "claim", "missing or empty"),
        (
            {"evidence": {"15": [{"sentences": [2], "label": "SUPPORT"}]}},
            "evidence.15.sentences",
            "past the end of the abstract (2 sentences)",
        ),
        ({"evidence": {"15": [{"sentences": [1], "label": "MAYBE"}]}}, "label", "not SUPPORT"),
    ],
)
def test_bad_claims_name_file_claim_and_field(
    tmp_path: Path, edit: dict, field: str, problem: str
) -> None:
    folder = write(tmp_path / "sf", [{**CLAIMS[0], **edit}, CLAIMS[1]])
    with pytest.raises(InputError) as err:
        load_dataset("scifact", folder)
    message = str(err.value)
    assert "claims_train.jsonl" in message and field in message and problem in message
    assert "\n" not in message


def test_real_training_claims(scifact_dir: Path) -> None:
    data = load_dataset("scifact", scifact_dir, split="train")
    assert len(data.queries) == len(data.claims) == len(data.candidates) == 809
    assert sum(bool(c.evidence) for c in data.claims.values()) == 505
    lines = (scifact_dir / "corpus_sentences.jsonl").read_text(encoding="utf-8").splitlines()
    corpus = {str(r["doc_id"]): r for r in map(json.loads, lines)}
    title, sentences = data.sentences["2"]["13734012"]
    assert (title, list(sentences)) == (corpus["13734012"]["title"], corpus["13734012"]["abstract"])
    assert data.claims["2"].evidence["13734012"].label == "CONTRADICT"
