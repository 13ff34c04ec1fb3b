"""A SciFact-format experiment through the one pipeline with the verify stage (oracle
setting: the cited abstracts are the pool): each question's SciFact prediction is logged,
the official metrics are scored from the log, and the ``verdict`` generator answers with
no LLM (stand-in selector and verdict models registered by name)."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

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
        "metrics": [
            "abstract_label_only_f1",
            "sentence_label_f1",
            "claim_refused",
            "claim_precision",
            "abstract_off_evidence",
        ],
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
    # the claim-level measures read each record's overall verdict (`verify.label`)
    assert recs["2"]["verify"]["label"] == "CONTRADICT"
    assert cells["claim_refused"] == 0.0 and cells["claim_precision"] == 1.0
    assert cells["abstract_off_evidence"] == 0.0


def test_the_report_pairs_scifact_f1s_by_swapping_claims(tmp_path, registered):
    """`eval report --baseline`: SciFact's F1s are corpus-level, so the paired test swaps each
    claim's counts (f1_randomization); a pipeline reading no abstract predicts nothing."""
    from sciera.eval.compare import compare_pipelines

    folder = write(tmp_path / "scifact")
    verify = {"selector": "overlap", "verdict": "keyword", "abstracts": 2}
    spec = {
        "name": "pair",
        "dataset": {"type": "scifact", "path": str(folder)},
        "metrics": ["abstract_label_only_f1", "abstract_label_only_precision"],
        "repeats": 1,
        "pipelines": [
            {"name": "oracle", "retriever": "candidates", "verify": verify},
            {"name": "none", "retriever": "candidates"},
        ],
    }
    out = tmp_path / "out"
    run_experiment(
        parse_experiment(spec, "pair.yaml"), out, settings=load_settings(home=tmp_path / "home")
    )
    [c] = compare_pipelines(load_results(out), baseline="none")
    assert (c.pipeline, c.metric, c.test.test) == (
        "oracle",
        "abstract_label_only_f1",
        "f1_randomization",
    )
    assert (c.baseline_mean, c.mean, c.test.n) == (0.0, 1.0, 2)
    assert c.test.p_value == pytest.approx(0.5, abs=0.05)  # 2 claims: 4 swap patterns


def test_a_searched_corpus_is_verified_on_the_sentences_its_store_keeps(tmp_path, registered):
    """The open setting reads the corpus store's sentence lists, as `sciera verify` does, not
    the dataset's own (here the corpus holds abstract 11 with its sentences reversed: the
    rationale is sentence 1 of the store, sentence 0 of the claims folder's file)."""
    from sciera.corpus import ingest
    from sciera.retrieve import build_indexes

    folder = write(tmp_path / "scifact")
    reordered = [{**SENTENCES[0], "abstract": SENTENCES[0]["abstract"][::-1]}, SENTENCES[1]]
    source = tmp_path / "corpus_sentences.jsonl"
    source.write_text("".join(json.dumps(r) + "\n" for r in reordered))
    corpus = tmp_path / "corpus"
    ingest(source, corpus, format="scifact-sentences")
    settings = load_settings(home=tmp_path / "home")
    build_indexes(corpus, settings, which=["bm25"])
    verify = {"selector": "overlap", "verdict": "keyword", "abstracts": 1}
    spec = {
        "name": "open",
        "dataset": {"type": "scifact", "path": str(folder)},
        "corpus": str(corpus),
        "metrics": ["abstract_label_only_f1"],
        "repeats": 1,
        "pipelines": [
            {"name": "open", "retriever": "bm25", "depth": 1, "verify": verify},
            {"name": "oracle", "retriever": "candidates", "verify": verify},
        ],
    }
    out = tmp_path / "out"
    run_experiment(parse_experiment(spec, "open.yaml"), out, settings=settings)
    records = load_results(out).records
    open_pred = records["open"][0]["1"]["verification"]["evidence"]["11"]
    assert open_pred == {"label": "SUPPORT", "sentences": [1]}
    assert records["oracle"][0]["1"]["verification"]["evidence"]["11"]["sentences"] == [0]


def _bioasq(path: Path, undecided: bool = False) -> Path:
    url = "http://www.ncbi.nlm.nih.gov/pubmed/"
    questions = [  # yes/no questions that do not open with an auxiliary verb
        (
            "q1",
            "Adenoma risk after aspirin: is it lowered?",
            "yes",
            "11",
            "Aspirin lowered adenoma risk.",
        ),
        (
            "q2",
            "Vitamin D and polyp risk: are they associated?",
            "no",
            "12",
            "Vitamin D was not associated with polyp risk.",
        ),
    ]
    if undecided:  # the snippet neither lowers nor dissociates: NOT ENOUGH INFO
        questions.append(("q3", "Doses of aspirin: were they high?", "no", "11", "Doses were low."))
    data = {
        "questions": [
            {
                "id": qid,
                "body": body,
                "type": "yesno",
                "exact_answer": label,
                "ideal_answer": [text],
                "documents": [url + doc],
                "snippets": [{"text": text, "document": url + doc}],
            }
            for qid, body, label, doc, text in questions
        ]
    }
    path.write_text(json.dumps(data))
    return path


def _run_bioasq(tmp_path: Path, params: dict, undecided: bool = False, **answer) -> dict:
    spec = {
        "name": "bioasq",
        "dataset": {"type": "bioasq", "path": str(_bioasq(tmp_path / "yesno.json", undecided))},
        "metrics": ["yesno_accuracy"],
        "settings": {"verify": {"selector": "overlap", "verdict": "keyword"}, "answer": answer},
        "repeats": 1,
        "pipelines": [
            {
                "name": "verdict",
                "retriever": "candidates",
                "verify": {"selector": "overlap", "verdict": "keyword"},
                "generator": "verdict",
                "generator_params": params,
            }
        ],
    }
    exp = parse_experiment(spec, "bioasq.yaml")
    out = tmp_path / "out"
    run_experiment(
        exp, out, settings=load_settings(home=tmp_path / "home"), llm_factory=lambda s, i: None
    )
    return load_results(out).records["verdict"][0]


def test_a_datasets_yes_no_questions_are_verified_whatever_their_wording(tmp_path, registered):
    recs = _run_bioasq(tmp_path, {"allow_maybe": False})
    assert recs["q1"]["answer"]["exact"] == ["yes"] and recs["q2"]["answer"]["exact"] == ["no"]
    assert recs["q1"]["verify"]["label"] == "SUPPORT"
    assert recs["q2"]["verify"]["label"] == "CONTRADICT"


def test_bioasq_questions_get_yes_or_no_never_maybe(tmp_path, registered):
    for name in "abc":
        (tmp_path / name).mkdir()
    recs = _run_bioasq(tmp_path / "a", {}, undecided=True)
    assert recs["q3"]["verify"]["label"] == "NOT ENOUGH INFO"
    assert recs["q3"]["answer"]["exact"] in (["yes"], ["no"])
    named = _run_bioasq(tmp_path / "b", {}, undecided=True, allow_maybe=True)
    assert named["q3"]["answer"]["exact"] == ["maybe"]  # the experiment's settings win
    own = _run_bioasq(tmp_path / "c", {"allow_maybe": True}, undecided=True)
    assert own["q3"]["answer"]["exact"] == ["maybe"]  # and the pipeline's own


def test_a_pipelines_own_question_type_wins_over_the_datasets(tmp_path):
    from sciera.datasets.loaders import load_dataset
    from sciera.eval.experiment import ExperimentPipeline
    from sciera.eval.runner import question_type_of

    data = load_dataset("bioasq", _bioasq(tmp_path / "yesno.json"))
    assert data.question_types == {"q1": "yesno", "q2": "yesno"}
    plain = ExperimentPipeline(name="p", retriever="candidates", generator="llm")
    ideal = ExperimentPipeline(
        name="i",
        retriever="candidates",
        generator="llm",
        generator_params={"question_type": "ideal"},
    )
    assert question_type_of(plain, data, "q1") == "yesno"
    assert question_type_of(ideal, data, "q1") == "ideal"
    assert question_type_of(plain, data.subset(["q2"]), "q2") == "yesno"
