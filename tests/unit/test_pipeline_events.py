"""``Pipeline.run(..., on_event=...)``: one JSON-ready event per stage, in order, and an
exception from the callback stops the run before the next stage."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from test_pipeline import DOCS, Q, overrides, scripted
from tiny_corpus import bm25_corpus

from sciera.pipeline import answer_json, pipeline_from_settings
from sciera.settings import load_settings


@pytest.fixture(scope="module")
def corpus(tmp_path_factory: pytest.TempPathFactory) -> Path:
    return bm25_corpus(tmp_path_factory.mktemp("events"), DOCS)


def test_each_stage_reports_json_ready_data_in_order(corpus, tmp_path):
    events: list[tuple[str, dict]] = []
    pipe = pipeline_from_settings(corpus, load_settings(**overrides(tmp_path)), llm=scripted())
    answer = pipe.answer(Q, on_event=lambda name, data: events.append((name, data)))
    assert [name for name, _ in events] == ["retrieved", "reranked", "evidence", "answer"]
    for _, data in events:
        assert json.loads(json.dumps(data)) == data  # plain JSON, nothing lost
    data = dict(events)
    retrieved = data["retrieved"]["candidates"]
    assert [c["rank"] for c in retrieved] == [1, 2, 3] and retrieved[0]["passage_id"] == "a1#0"
    assert retrieved[0]["text"] == DOCS[0][2] and data["retrieved"]["first_stage"] == "bm25"
    assert data["reranked"]["candidates"] == answer.trace["pipeline"]["candidates"]
    assert data["reranked"]["trace"]["intent"]["intent"] == "factual"
    assert data["reranked"]["filter"] == {"tau": 0.8, "top_k": 2, "calibrated": True}
    assert data["evidence"]["extractor"] == "deepera"
    assert [e["passage_id"] for e in data["evidence"]["evidence"]] == ["a1#0"]
    assert data["answer"] == json.loads(json.dumps(answer_json(answer)))


class Stop(Exception):
    pass


def test_an_exception_from_the_callback_stops_before_the_next_stage(corpus, tmp_path):
    llm = scripted()
    pipe = pipeline_from_settings(corpus, load_settings(**overrides(tmp_path)), llm=llm)

    def stop_after_rerank(name: str, data: dict) -> None:
        if name == "reranked":
            raise Stop

    with pytest.raises(Stop):
        pipe.run(Q, on_event=stop_after_rerank)
    assert llm.calls and not any("Answer with exactly one word" in c.prompt for c in llm.calls)


def test_without_a_callback_the_answer_is_unchanged(corpus, tmp_path):
    settings = load_settings(**overrides(tmp_path))

    def answer(**kwargs):
        return pipeline_from_settings(corpus, settings, llm=scripted()).answer(Q, **kwargs)

    plain, heard = answer(), answer(on_event=lambda *_: None)
    assert plain.text == heard.text and plain.citations == heard.citations
