"""`sciera dataset inject`: an SSLI set's distractors become documents of a copy of the
corpus, with the questions and their gold documents beside it as a BEIR folder."""

from __future__ import annotations

import json

import pytest
from typer.testing import CliRunner

from sciera.cli import _register, app
from sciera.corpus import PassageStore, ingest
from sciera.datasets.ssli.inject import distractor_doc_id, inject, is_distractor, questions
from sciera.datasets.ssli.io import write_instances
from sciera.errors import ScieraError
from sciera.types import Candidate, QAInstance

DOCS = {"41": ("Mammals", "Over 720 species live here."), "7": ("Birds", "Finches on islands.")}


def _instances(with_distractor: bool = True) -> list[QAInstance]:
    gold, other = Candidate("41#0", "Over 720 species."), Candidate("7#0", "Finches.")
    fake = Candidate("ssli:41-p0-q1:1", "Reptile collections grew in 1850.", True, "misleading")
    ssli = (gold, other, fake) if with_distractor else (gold, other)
    return [
        QAInstance("41-p0-q1/base", "How many?", "Over 720.", ("41#0",), "base", (gold, other)),
        QAInstance("41-p0-q1/ssli", "How many?", "Over 720.", ("41#0",), "ssli", ssli),
    ]


@pytest.fixture
def corpus(tmp_path):
    src = tmp_path / "beir"
    src.mkdir()
    lines = [json.dumps({"_id": d, "title": t, "text": x}) for d, (t, x) in DOCS.items()]
    (src / "corpus.jsonl").write_text("\n".join(lines) + "\n")
    ingest(src, tmp_path / "corpus", format="beir")
    return tmp_path / "corpus"


def test_distractor_ids_are_documents_of_their_own():
    assert distractor_doc_id("ssli:41-p0-q1:1") == "ssli_41-p0-q1_1"
    assert is_distractor("ssli_41-p0-q1_1") and not is_distractor("41")
    qs = questions(_instances())
    assert qs.queries == {"41-p0-q1": "How many?"}
    assert qs.qrels == {"41-p0-q1": {"41": 1}}
    assert qs.distractors == {"ssli_41-p0-q1_1": "Reptile collections grew in 1850."}
    assert questions(_instances(with_distractor=False)).queries == {}


def test_inject_copies_the_corpus_adds_the_distractors_and_writes_the_questions(tmp_path, corpus):
    write_instances(_instances(), tmp_path / "instances.jsonl")
    out = tmp_path / "with-ssli"
    done = inject(tmp_path / "instances.jsonl", corpus, out)
    assert (done.questions, done.distractors, done.copied) == (1, 1, True)
    with PassageStore.open(out) as store:
        assert sorted(store.doc_ids()) == ["41", "7", "ssli_41-p0-q1_1"]
    with PassageStore.open(corpus) as store:  # the corpus itself is untouched
        assert sorted(store.doc_ids()) == ["41", "7"]
    beir = out / "ssli"
    assert json.loads((beir / "queries.jsonl").read_text()) == {
        "_id": "41-p0-q1",
        "text": "How many?",
    }
    assert (beir / "qrels" / "test.tsv").read_text().splitlines()[1:] == ["41-p0-q1\t41\t1"]
    again = inject(tmp_path / "instances.jsonl", corpus, out)  # a rerun keeps the copy
    assert not again.copied
    with PassageStore.open(out) as store:
        assert store.count_documents() == 3


def test_inject_refuses_the_corpus_itself_and_a_set_without_distractors(tmp_path, corpus):
    write_instances(_instances(), tmp_path / "a.jsonl")
    with pytest.raises(ScieraError, match="the corpus itself"):
        inject(tmp_path / "a.jsonl", corpus, corpus)
    write_instances(_instances(with_distractor=False), tmp_path / "b.jsonl")
    with pytest.raises(ScieraError, match="no SSLI-setting question with a distractor"):
        inject(tmp_path / "b.jsonl", corpus, tmp_path / "out")
    assert not (tmp_path / "out").exists()


def test_the_cli_says_what_it_did_and_what_comes_next(tmp_path, corpus):
    write_instances(_instances(), tmp_path / "instances.jsonl")
    out = tmp_path / "with-ssli"
    args = ["dataset", "inject", str(tmp_path / "instances.jsonl"), "--corpus", str(corpus)]
    _register()
    result = CliRunner().invoke(app, [*args, "--out", str(out)])
    assert result.exit_code == 0, result.output
    assert "1 distractors of 1 questions" in result.output
    assert f"sciera index --corpus {out}" in result.output
