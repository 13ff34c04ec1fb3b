"""The composed pipeline on a tiny BM25-indexed corpus with the ScriptedLLM."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from tiny_corpus import bm25_corpus

import sciera
from fakes import ScriptedLLM
from sciera.generate.base import exact_answer
from sciera.pipeline import answer_json, pipeline_from_settings
from sciera.settings import load_settings

DOCS = [
    ("a1", "Albendazole and filariasis", "Albendazole treats lymphatic filariasis in trials."),
    ("c1", "Curcumin", "Curcumin reduces inflammation in chondrocytes treated with IL-1beta."),
    ("m1", "Malaria", "Malaria vectors transmit parasites; filariasis vectors differ."),
]
INTENT = {"topic": "t", "entity_type": "drug", "intent": "factual", "expected_answer_type": "a"}
Q = "Is albendazole used to treat lymphatic filariasis?"


@pytest.fixture(scope="module")
def corpus(tmp_path_factory: pytest.TempPathFactory) -> Path:
    return bm25_corpus(tmp_path_factory.mktemp("pipe"), DOCS)


def scripted(relevant: int = 9) -> ScriptedLLM:
    return (
        ScriptedLLM()  # first matching rule wins: answer prompts also quote the evidence
        .on("Answer with exactly one word", probs={"yes": 0.9, "no": 0.1})
        .on("explain the answer", {"explanation": "Trials show it works [1], see [3]."})
        .on("Research question", INTENT)
        .on("Write the summary", "Albendazole treats lymphatic filariasis.")
        .on("Albendazole treats", probs={str(relevant): 1.0})
        .on("Curcumin reduces", probs={"2": 1.0})
        .on("Malaria vectors", probs={"1": 1.0})
    )


def overrides(tmp_path: Path, evidence: str = "deepera") -> dict:
    return {
        "home": tmp_path,
        "retrieve": {"retriever": "bm25"},
        "rerank": {"depth": 3},
        "filter": {"top_k": 2, "tau": 0.8},
        "answer": {"evidence": evidence},
    }


def test_deepera_pipeline_answers_with_cited_passages(corpus, tmp_path):
    llm = scripted()
    pipe = pipeline_from_settings(corpus, load_settings(**overrides(tmp_path)), llm=llm)
    a = pipe.answer(Q)
    assert exact_answer(a) == ("yes",) and a.question_type == "yesno"
    assert a.text == "Yes. Trials show it works [1], see."
    assert [c.passage_id for c in a.citations] == ["a1#0"]
    assert a.citations[0].title == "Albendazole and filariasis"
    assert a.trace["dangling_citations"] == 1
    assert [e.summary for e in a.evidence] == ["Albendazole treats lymphatic filariasis."]
    info = a.trace["pipeline"]
    rows = {r["passage_id"]: r for r in info["candidates"]}
    assert set(rows) == {"a1#0", "c1#0", "m1#0"}
    assert rows["a1#0"]["kept"] and rows["a1#0"]["score"] == pytest.approx(0.9)
    assert not rows["c1#0"]["kept"] and "tau" in rows["c1#0"]["why"]
    assert all(r["graded"] for r in rows.values())  # no calibrator: nothing pruned
    # CR: the kept passage (3 title + 6 text words) / the 4-word summary
    assert info["compression_ratio"] == pytest.approx(9 / 4)
    assert [r["passage_id"] for r in info["candidates"] if r["kept"]] == ["a1#0"]
    assert info["filter"] == {"tau": 0.8, "top_k": 2, "calibrated": True}
    assert info["rerank_trace"]["intent"]["intent"] == "factual"
    json.dumps(answer_json(a))


def test_nothing_survives_the_filter_refuses(corpus, tmp_path):
    a = sciera.ask(Q, corpus, llm=scripted(relevant=3), **overrides(tmp_path))
    assert a.insufficient and a.evidence == () and a.citations == ()
    assert a.trace["refused"] == "no evidence survived the filter"
    assert all(not r["kept"] for r in a.trace["pipeline"]["candidates"])


def test_full_evidence_skips_summaries(corpus, tmp_path):
    llm = scripted()
    a = sciera.ask(Q, corpus, llm=llm, **overrides(tmp_path, "full"))
    assert not any("Write the summary" in c.prompt for c in llm.calls)
    assert [e.passage.passage_id for e in a.evidence] == ["a1#0"] and a.evidence[0].summary == ""
    assert a.trace["pipeline"]["compression_ratio"] == 1.0


def test_empty_question_is_refused_before_any_llm_call(corpus, tmp_path):
    from sciera.errors import ScieraError

    llm = scripted()
    with pytest.raises(ScieraError, match="the question is empty"):
        sciera.ask(" \n", corpus, llm=llm, **overrides(tmp_path))
    assert llm.calls == []


FACTOID = "Which drug treats lymphatic filariasis?"


def closest_llm(answers: list[str]) -> ScriptedLLM:
    reply = {"answers": answers, "explanation": "The closest passage names it."}
    return scripted(relevant=3).on("short candidate answers", reply)


def test_nothing_kept_a_factoid_reads_the_closest_passages_and_keeps_what_they_state(
    corpus, tmp_path
):
    llm = closest_llm(["albendazole", "Ivermectin"])
    a = sciera.ask(FACTOID, corpus, llm=llm, **overrides(tmp_path))
    assert not a.insufficient and exact_answer(a) == ("albendazole",)
    assert a.text.startswith("albendazole. ")
    assert [c.passage_id for c in a.citations] == ["a1#0"]  # the passage that states it
    assert a.evidence and not any(e.kept for e in a.evidence)  # shown below tau
    assert a.trace["closest"] == 3 and a.trace["unstated"] == ["Ivermectin"]
    assert all(not r["kept"] for r in a.trace["pipeline"]["candidates"])
    assert not any("Write the summary" in c.prompt for c in llm.calls)  # quoted as they are


def test_nothing_kept_a_factoid_no_closest_passage_states_is_refused(corpus, tmp_path):
    a = sciera.ask(FACTOID, corpus, llm=closest_llm(["Ivermectin"]), **overrides(tmp_path))
    assert a.insufficient and a.citations == () and exact_answer(a) == ()
    assert a.trace["refused"] == (
        "no passage passed the filter, and the 3 closest state none of the answers verbatim"
    )
    assert a.trace["unstated"] == ["Ivermectin"]
    assert {e.passage.passage_id for e in a.evidence} == {"a1#0", "c1#0", "m1#0"}


def test_nothing_kept_a_summary_question_or_closest_zero_is_refused_without_answer_calls(
    corpus, tmp_path
):
    describe = "Describe how lymphatic filariasis is treated."
    for question, extra in ((describe, {}), (FACTOID, {"top_k": 2, "tau": 0.8, "closest": 0})):
        llm = closest_llm(["albendazole"])
        settings = overrides(tmp_path)
        settings["filter"] = {**settings["filter"], **extra}
        a = sciera.ask(question, corpus, llm=llm, **settings)
        assert a.insufficient and a.evidence == ()
        assert a.trace["refused"] == "no evidence survived the filter"
        assert not any("short candidate answers" in c.prompt for c in llm.calls)


def test_a_corpus_with_sentences_cut_by_older_rules_is_named_once(tmp_path, monkeypatch):
    """The verify stage's sentence source warns once per corpus and process when some of
    its files were ingested under older splitter rules, naming the command that refreshes
    them; a current corpus is not named."""
    import logging
    import sqlite3

    from sciera.corpus import ingest
    from sciera.pipeline import build

    file = tmp_path / "docs.jsonl"
    file.write_text(json.dumps({"id": "d", "text": "One. Two."}) + "\n", encoding="utf-8")
    current, older = tmp_path / "current", tmp_path / "older"
    for corpus in (current, older):
        ingest(file, corpus)
    conn = sqlite3.connect(older / "store.sqlite")
    conn.execute("UPDATE journal SET params = json_remove(params, '$.sentences')")
    conn.commit()
    conn.close()

    class Records(logging.Handler):  # on the logger itself: whatever propagation is set to
        def __init__(self) -> None:
            super().__init__(logging.WARNING)
            self.messages: list[str] = []

        def emit(self, record: logging.LogRecord) -> None:
            self.messages.append(record.getMessage())

    seen = Records()
    # import-linter's CLI (test_architecture.py, earlier in the session) configures logging
    # with dictConfig, which disables the loggers that exist by then
    monkeypatch.setattr(build.logger, "disabled", False)
    build.logger.addHandler(seen)
    try:
        for corpus in (current, older, older):
            build._store(corpus).close()
    finally:
        build.logger.removeHandler(seen)
    (message,) = seen.messages
    assert str(older) in message and str(current) not in message
    assert f"sciera ingest {file.resolve()} --corpus {older}" in message
