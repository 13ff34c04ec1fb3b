"""BioASQ JSON (yes/no questions with snippets) and PubMedQA as yes/no datasets."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from sciera.datasets import load_dataset
from sciera.datasets.bioasq import pmid_of
from sciera.datasets.loaders import EvalDataset
from sciera.errors import InputError
from sciera.eval.metrics import evaluate_answers, evaluate_labels

FIXTURE = Path(__file__).parent / "data" / "bioasq_yesno_5_from_pubmedqa_pqal_dev.json"


def question(qid: str = "q1", **edit: object) -> dict:
    base = {
        "id": qid,
        "body": "Is X safe?",
        "type": "yesno",
        "exact_answer": "yes",
        "ideal_answer": ["Yes, X is safe."],
        "documents": ["http://www.ncbi.nlm.nih.gov/pubmed/111"],
        "snippets": [
            {
                "offsetInBeginSection": 0,
                "offsetInEndSection": 20,
                "text": "X was safe. No harm.",
                "beginSection": "abstract",
                "endSection": "abstract",
                "document": "http://www.ncbi.nlm.nih.gov/pubmed/111",
            },
            {"text": "Y was not.", "document": "http://www.ncbi.nlm.nih.gov/pubmed/222"},
        ],
    }
    return {**base, **edit}


def write(tmp_path: Path, questions: list) -> Path:
    path = tmp_path / "bioasq.json"
    path.write_text(json.dumps({"questions": questions}), encoding="utf-8")
    return path


def test_fixture_in_the_real_format(tmp_path: Path) -> None:
    data = load_dataset("bioasq", FIXTURE)
    assert data.unit == "passage" and len(data.queries) == 5
    assert sorted(data.labels.values()) == ["no", "no", "yes", "yes", "yes"]
    q = "pqal-10808977"
    assert data.queries[q] == "Can tailored interventions increase mammography use among HMO women?"
    [snippet] = data.candidates[q]
    assert (snippet.doc_id, snippet.passage_id) == ("10808977", "10808977#sections.0:0-788")
    assert data.qrels[q] == {snippet.passage_id: 1}
    assert data.answers[q][0] == "yes" and data.answers[q][1] == snippet.text
    assert " ".join(data.sentences[q]["10808977"][1]).split() == snippet.text.split()
    # labels feed the yes/no scores: always "yes" gets 3/5 and macro-F1 (3/4 + 0) / 2
    always_yes = dict.fromkeys(data.queries, "yes")
    assert evaluate_labels(data.labels, always_yes) == {"macro_f1": pytest.approx(3 / 8)}
    refs = {q: a for q, a in data.answers.items()}
    assert evaluate_answers(always_yes, refs, ["yesno_accuracy"]) == {"yesno_accuracy": 0.6}


def test_snippets_become_the_pool_and_other_types_are_left_out(tmp_path: Path) -> None:
    factoid = question("q2", type="factoid", exact_answer=[["x"]])
    data = load_dataset("bioasq", write(tmp_path, [question(), factoid]))
    assert list(data.queries) == ["q1"]
    pool = data.candidates["q1"]
    assert [(p.passage_id, p.doc_id) for p in pool] == [
        ("111#abstract:0-20", "111"),
        ("222#s1", "222"),
    ]
    assert data.sentences["q1"] == {
        "111": ("", ("X was safe.", "No harm.")),
        "222": ("", ("Y was not.",)),
    }
    assert data.answers["q1"] == ("yes", "Yes, X is safe.")
    doubled = question(snippets=[question()["snippets"][0]] * 2)
    assert len(load_dataset("bioasq", write(tmp_path, [doubled])).candidates["q1"]) == 1


@pytest.mark.parametrize("answer", ["Yes", ["yes"], [["yes"]], " YES "])
def test_exact_answer_spellings(tmp_path: Path, answer: object) -> None:
    data = load_dataset("bioasq", write(tmp_path, [question(exact_answer=answer)]))
    assert data.labels == {"q1": "yes"}


@pytest.mark.parametrize(
    ("edit", "field"),
    [
        ({"exact_answer": "maybe"}, "exact_answer"),
        ({"body": ""}, "body"),
        ({"snippets": []}, "snippets"),
        ({"snippets": [{"text": "t"}]}, "snippets[0].document"),
        ({"snippets": [{"text": "", "document": "1"}]}, "snippets[0].text"),
        ({"snippets": [{"text": "t", "document": "http://x/pubmed/"}]}, "snippets[0].document"),
        ({"ideal_answer": [3]}, "ideal_answer"),
        ({"id": ""}, "id"),
    ],
)
def test_bad_questions_name_file_question_and_field(tmp_path: Path, edit: dict, field: str) -> None:
    path = write(tmp_path, [question(**edit)])
    with pytest.raises(InputError) as err:
        load_dataset("bioasq", path)
    assert err.value.field == field
    assert str(err.value).startswith(f"{path}:question ")
    assert "\n" not in str(err.value)


def test_file_level_errors(tmp_path: Path) -> None:
    not_bioasq = tmp_path / "list.json"
    not_bioasq.write_text("[]", encoding="utf-8")
    with pytest.raises(InputError, match="questions list"):
        load_dataset("bioasq", not_bioasq)
    with pytest.raises(InputError, match="more than once"):
        load_dataset("bioasq", write(tmp_path, [question(), question(type="list")]))
    with pytest.raises(InputError, match="cannot read BioASQ JSON"):
        load_dataset("bioasq", tmp_path / "missing.json")


def test_pmid_of() -> None:
    assert pmid_of("http://www.ncbi.nlm.nih.gov/pubmed/22475152") == "22475152"
    assert pmid_of("22475152") == "22475152"
    with pytest.raises(ValueError):
        pmid_of("http://www.ncbi.nlm.nih.gov/pubmed/")


def test_pubmedqa_labels_and_sentences_leave_its_digests_unchanged(shared_data: Path) -> None:
    data = load_dataset("pubmedqa", shared_data / "pubmedqa" / "pqal_dev.json")
    assert len(data.labels) == 500 and set(data.labels.values()) == {"yes", "no", "maybe"}
    q = next(iter(data.queries))
    assert data.answers[q][0] == data.labels[q]
    contexts = [p.text for p in data.candidates[q]]
    assert " ".join(data.sentences[q][q][1]).split() == " ".join(contexts).split()
    # the sentences are the pool cut differently: a results log keeps resuming
    bare = EvalDataset(
        data.name,
        data.unit,
        data.queries,
        data.qrels,
        data.answers,
        data.candidates,
        labels=data.labels,
    )
    assert bare.input_key(q) == data.input_key(q)


def test_a_span_listed_twice_keeps_its_first_text(tmp_path: Path) -> None:
    # BioASQ's own files list some spans twice, once tokenized ("pain , shock")
    first = question()["snippets"][0]
    again = {**first, "text": "X was safe . No harm ."}
    data = load_dataset("bioasq", write(tmp_path, [question(snippets=[first, again])]))
    assert [p.text for p in data.candidates["q1"]] == ["X was safe. No harm."]


def test_split_by_batch(tmp_path: Path) -> None:
    batches = {"a": "7B1", "b": "8B5", "c": "9B2"}
    path = write(tmp_path, [question(q, batch=b) for q, b in batches.items()])
    assert list(load_dataset("bioasq", path, split="train").queries) == ["a", "b"]
    assert list(load_dataset("bioasq", path, split="dev").queries) == ["c"]
    assert list(load_dataset("bioasq", path).queries) == ["a", "b", "c"]
    with pytest.raises(InputError) as err:
        load_dataset("bioasq", write(tmp_path, [question(batch="10B1")]), split="dev")
    assert err.value.field == "batch"
    with pytest.raises(InputError, match="not train or dev"):
        load_dataset("bioasq", path, split="test")


def test_the_shared_training_file_loads_by_split(shared_data: Path) -> None:
    path = shared_data / "bioasq" / "training_7b_9b.json"
    train = load_dataset("bioasq", path, split="train")
    dev = load_dataset("bioasq", path, split="dev")
    assert (len(train.queries), len(dev.queries)) == (290, 116)
    assert sorted(dev.labels.values()).count("no") == 41
