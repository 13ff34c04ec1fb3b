"""``GET /v1/corpora/{name}/documents/{doc_id}``: a cited passage's paper, passage by passage
with sections, for the page's "Read in context" (real JATS articles, no model)."""

from __future__ import annotations

from pathlib import Path

import pytest
from fastapi.testclient import TestClient
from serve_helpers import assert_one_line_error
from tiny_corpus import fulltext_corpus

from fakes import ScriptedLLM
from sciera.serve.app import create_app
from sciera.settings import load_settings

STATIC = Path(__file__).resolve().parents[3] / "src" / "sciera" / "serve" / "static" / "app.js"


@pytest.fixture(scope="module")
def paper(tmp_path_factory: pytest.TempPathFactory) -> Path:
    return fulltext_corpus(tmp_path_factory.mktemp("paper"), ["pntd.0002065.nxml"], bm25=False)


def test_a_document_comes_back_in_order_with_its_sections(paper, tmp_path):
    from sciera.corpus import PassageStore

    with PassageStore.open(paper) as store:
        (doc,) = [d for d, _ in store.sources().popitem()[1]]
        stored = store.document_passages(doc)
    app = create_app(
        {"p": paper}, load_settings(home=tmp_path), llm_factory=lambda s: ScriptedLLM()
    )
    with TestClient(app) as client:
        r = client.get(f"/v1/corpora/p/documents/{doc}")  # a DOI: slashes in the path
        missing = client.get("/v1/corpora/p/documents/10.1/none")
        unknown = client.get(f"/v1/corpora/nope/documents/{doc}")
    assert r.status_code == 200, r.text
    data = r.json()
    assert data["doc_id"] == doc and data["title"] == stored[0].title
    rows = data["passages"]
    assert [p["passage_id"] for p in rows] == [p.passage_id for p in stored]
    assert [p["text"] for p in rows] == [p.text for p in stored]
    assert [p["index"] for p in rows] == sorted(p["index"] for p in rows)
    sections = [p["section"] for p in rows]
    assert "Methods" in " ".join(sections) and all(sections)
    assert {p["kind"] for p in rows} >= {"text"}
    assert "no document" in assert_one_line_error(missing, 404)
    assert "unknown corpus" in assert_one_line_error(unknown, 404)


def test_the_page_opens_a_card_in_context_as_text():
    script = STATIC.read_text(encoding="utf-8")
    body = script.split("async function showContext", 1)[1].split("\n}\n", 1)[0]
    assert "v1/corpora/" in body and "/documents/" in body and "encodeURIComponent(doc)" in body
    assert "innerHTML" not in body  # passages are untrusted: text nodes only
