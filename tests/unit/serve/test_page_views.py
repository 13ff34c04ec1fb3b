"""The web page's files against the server they talk to (no browser; the e2e tier drives
the page in Chromium): every element the script looks up exists, every view has its nav
link and section, every route it fetches is served, and every event and field a streamed
ask or verify sends (claim verification included, with stand-in models) is one the page
reads. So a renamed event or field fails here, not silently on the page."""

from __future__ import annotations

import json
import re
from pathlib import Path

import pytest
from fastapi.testclient import TestClient
from tiny_corpus import bm25_corpus

from fakes import ScriptedLLM
from sciera.serve.app import STATIC_DIR, create_app
from sciera.serve.operations import ASK_EVENTS, VERIFY_EVENTS
from sciera.settings import load_settings
from sciera.types import CONFLICTING, VERDICT_LABELS

HTML = (STATIC_DIR / "index.html").read_text(encoding="utf-8")
SCRIPT = (STATIC_DIR / "app.js").read_text(encoding="utf-8")
STYLE = (STATIC_DIR / "style.css").read_text(encoding="utf-8")
IDS = set(re.findall(r'\bid="([^"]+)"', HTML))

# the trial supports the claim, the cohort contradicts it (the stand-in verdict model reads
# "lowered" / "not associated"); the cohort's grade is below tau, so it is cited unkept
DOCS = [
    ("a1", "Aspirin trial", "Patients took aspirin. Aspirin lowered adenoma risk in a trial."),
    ("a2", "Aspirin cohort", "Aspirin use was not associated with adenoma risk in this cohort."),
]
CLAIM = "Aspirin reduces the risk of colorectal adenoma."
INTENT = {"topic": "t", "entity_type": "drug", "intent": "factual", "expected_answer_type": "a"}


def handler(name: str) -> str:
    """The body of the script's function ``name`` (up to the next top-level function)."""
    body = SCRIPT.split(f"function {name}(", 1)[1]
    return re.split(r"\n(?:async )?function ", body, maxsplit=1)[0]


def const_literal(const: str) -> str:
    """The literal assigned to the script's top-level ``const``."""
    return SCRIPT.split(f"const {const} = {{", 1)[1].split("};", 1)[0]


def test_every_element_the_script_looks_up_is_in_the_page():
    looked_up = set(re.findall(r'\$\("([\w-]+)"\)', SCRIPT))
    assert {"verdict", "below", "below-box", "verify-form", "verify-cards"} <= looked_up
    built = {i for i in looked_up if i.startswith("stage-")}  # the stage items it adds
    assert built and looked_up - built <= IDS, sorted(looked_up - built - IDS)
    # the stage lists and the view's form, by the names the script passes around
    for quoted in ("verify-stages", "verify-error", "verify-button", "stages", "ask-error"):
        assert f'"{quoted}"' in SCRIPT and quoted in IDS


def test_every_view_has_its_nav_link_and_section():
    views = json.loads(re.search(r"const VIEWS = (\[[^\]]*\]);", SCRIPT).group(1))
    assert "verify" in views
    for view in views:
        assert f'<a href="#{view}" id="nav-{view}">' in HTML, view
        assert f'<section id="view-{view}"' in HTML, view


def test_every_form_control_has_a_label():
    controls = re.findall(r'<(?:textarea|select|input)\b[^>]*\bid="([^"]+)"', HTML)
    assert {"claim", "verify-corpus", "question", "corpus"} <= set(controls)
    for control in controls:
        assert f'<label for="{control}"' in HTML, control


def test_every_route_the_script_fetches_is_served(make_app):
    paths = TestClient(make_app(static_dir=STATIC_DIR)).get("/openapi.json").json()["paths"]
    fetched = set(re.findall(r'[`"](v1/[\w/]*)', SCRIPT))
    assert {"v1/ask", "v1/verify", "v1/corpora"} <= fetched
    for url in fetched:
        assert any(p.startswith("/" + url.rstrip("/")) for p in paths), url


def test_every_verdict_label_has_a_look_and_a_meaning():
    classes = dict(re.findall(r'"?([A-Z][A-Z ]+)"?: "([a-z]+)"', const_literal("LABEL_CLASS")))
    for label in (*VERDICT_LABELS, CONFLICTING):
        assert label in classes, label
        assert f".badge.{classes[label]}" in STYLE, label
        assert re.search(rf'"?{label}"?: "[A-Z]', const_literal("LABEL_MEANING")), label


@pytest.fixture(scope="module")
def aspirin(tmp_path_factory: pytest.TempPathFactory) -> Path:
    return bm25_corpus(tmp_path_factory.mktemp("page"), DOCS)


@pytest.fixture
def streamed(aspirin: Path, tmp_path: Path, registered) -> dict[str, list[tuple[str, dict]]]:
    """The events of a streamed ask of a claim and of a streamed verify, as served."""
    settings = load_settings(
        home=tmp_path,
        retrieve={"retriever": "bm25"},
        rerank={"depth": 2},
        filter={"top_k": 2, "tau": 0.8},
        answer={"evidence": "deepera"},
        verify={"enabled": True, "selector": "overlap", "verdict": "keyword", "abstracts": 2},
    )
    llm = (
        ScriptedLLM()
        .on("Research question", INTENT)
        .on("Write the summary", "Aspirin lowered adenoma risk.")
        .on("explain the decision", "The trial lowered risk [1]; the cohort saw none [2].")
        .on("lowered adenoma", probs={"9": 1.0})
        .on("not associated", probs={"4": 1.0})
    )
    app = create_app({"tiny": aspirin}, settings, llm_factory=lambda s: llm)
    out = {}
    with TestClient(app) as client:
        for route, body in (("ask", {"question": CLAIM}), ("verify", {"claim": CLAIM})):
            with client.stream("POST", f"/v1/{route}", json={**body, "stream": True}) as r:
                assert r.status_code == 200
                text = r.read().decode()
            out[route] = [
                (
                    block.split("event: ", 1)[1].split("\n", 1)[0],
                    json.loads(block.split("data: ", 1)[1]),
                )
                for block in text.strip().split("\n\n")
            ]
    return out


def test_the_page_reads_every_event_a_verified_ask_and_a_verify_stream(streamed):
    ask = [name for name, _ in streamed["ask"]]
    verify = [name for name, _ in streamed["verify"]]
    assert ask == ["retrieved", "reranked", "verified", "evidence", "answer"]
    assert verify == list(VERIFY_EVENTS)
    assert set(ASK_EVENTS) <= set(ask)
    for name in ask:
        assert f'name === "{name}"' in handler("onAskEvent"), name
    for name in verify:
        assert f'name === "{name}"' in handler("onVerifyEvent"), name
    # the Verify stage is added by the event, not listed up front (other questions lack it)
    asks = SCRIPT.split("const ASK_STAGES = [", 1)[1].split("];", 1)[0]
    assert '"verified"' not in asks and '"answer"' in asks


def test_the_fields_the_page_reads_are_in_the_stream(streamed):
    events = dict(streamed["ask"])
    verified, answer = events["verified"], events["answer"]
    assert verified["label"] == "CONFLICTING"
    assert verified["supporting"] == ["a1"] and verified["contradicting"] == ["a2"]
    abstract = verified["abstracts"][0]
    rationale = abstract["rationales"][0]
    trace = answer["trace"]
    evidence = {e["passage_id"]: e for e in answer["evidence"]}
    assert evidence["a1#0"]["kept"] is True and evidence["a2#0"]["kept"] is False
    citation = answer["citations"][0]
    read = {  # field -> the record it belongs to, as the page reads it
        "label": verified,
        "confidence": abstract,
        "supporting": verified,
        "contradicting": verified,
        "abstracts": verified,
        "doc_id": abstract,
        "title": abstract,
        "probs": abstract,
        "rationales": evidence["a2#0"],
        "index": rationale,
        "text": rationale,
        "score": rationale,
        "kept": evidence["a2#0"],
        "summary": evidence["a1#0"],
        "sentences": citation,
        "marker": citation,
        "verification": trace,
        "decided_by": trace,
    }
    for field, record in read.items():
        assert field in record, field
        assert f".{field}" in SCRIPT, field
    assert citation["sentences"] and evidence["a2#0"]["rationales"][0]["doc_id"] == "a2"
    assert dict(streamed["verify"])["verified"]["abstracts"][0]["doc_id"] == "a1"
