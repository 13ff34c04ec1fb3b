"""`sciera serve` end to end: a real server (uvicorn, the embedded 0.5B model, the shipped
cross-encoder) on a real SciFact slice, driven through its web page in headless Chromium.
With SCIERA_SCREENSHOT set (the README's picture) it runs the default 1.5B instead.

The slice holds the first 300 SciFact abstracts plus one hostile record whose title and
text carry markup: the page must show it as text and run none of it. The claim, asked as a
yes/no question in the ask view and as a claim in the verify view, is verified by the
shipped verifier (``sciera.verify``'s ``scifact-verifier``): the ask view shows the
verdict, the rationale sentences on the evidence cards and the cited abstracts below tau
apart; the verify view shows what ``POST /v1/verify`` returns. Needs Debian's chromium
(/usr/bin/chromium) and the playwright package (the `dev` extra); its own browser download
is not used.
"""

from __future__ import annotations

import json
import os
import re
import shutil
import socket
import subprocess
import time
import urllib.request
from pathlib import Path

import pytest
from train_cli import sciera_exe

from sciera.corpus.ingest import ingest
from sciera.retrieve.build import build_indexes
from sciera.settings import load_settings

pytestmark = [pytest.mark.e2e, pytest.mark.integration]

CHROMIUM = shutil.which("chromium") or "/usr/bin/chromium"
CLAIM = "TNFAIP3 is a tumor suppressor in glioblastoma."  # SciFact test claim 1137
# the ask view (and the README's screenshot) asks it as a yes/no question: decided by the
# verifier's question decider (with the 1.5B: "No", CONTRADICT, as SciFact's training claim
# 1135 of the same meaning is labelled)
QUESTION = "Is TNFAIP3 a tumor suppressor in glioblastoma?"
GOLD = "33370"
# on topic enough for BM25's top 5, not a finding (keyword-stuffed text fooled the
# cross-encoder: P 0.67 over the gold abstract, so it is kept out of this record)
HOSTILE_TITLE = "<script>window.__pwned = 1</script>TNFAIP3 gene symbols"
HOSTILE_TEXT = (
    '<img src="x" onerror="window.__pwned = 2">Gene symbol TNFAIP3 is listed in the '
    "nomenclature tables of several databases."
)
ROOT = Path(__file__).resolve().parents[2]
LABELS = {"SUPPORT", "CONTRADICT", "NOT ENOUGH INFO", "CONFLICTING"}


@pytest.fixture(scope="module")
def corpus(scifact_dir: Path, tmp_path_factory: pytest.TempPathFactory) -> Path:
    root = tmp_path_factory.mktemp("serve")
    lines = (scifact_dir / "corpus.jsonl").read_text(encoding="utf-8").splitlines()[:300]
    hostile = {"_id": "hostile", "title": HOSTILE_TITLE, "text": HOSTILE_TEXT}
    (root / "corpus.jsonl").write_text("\n".join([*lines, json.dumps(hostile)]) + "\n")
    ingest(root / "corpus.jsonl", root / "corpus", format="beir")
    build_indexes(root / "corpus", load_settings(), which=["bm25"])
    return root / "corpus"


@pytest.fixture(scope="module")
def experiments(scifact_full_corpus: Path, tmp_path_factory: pytest.TempPathFactory) -> Path:
    """A copy of the shipped SSLI experiment whose manifest points at its set, restored
    (`sciera dataset unpack`'s code) from the SciFact corpus into a temporary folder."""
    from sciera.corpus.store import PassageStore
    from sciera.datasets.ssli.pack import unpack_to

    root = tmp_path_factory.mktemp("experiments")
    results = ROOT / "benchmarks" / "results"
    copy = shutil.copytree(results / "ssli_scifact_trained", root / "ssli_scifact_trained")
    packed = results / "ssli_scifact_100" / "build" / "instances.packed.jsonl.gz"
    with PassageStore.open(scifact_full_corpus) as store:
        unpack_to(packed, store, root / "ssli-set")
    manifest = json.loads((copy / "manifest.json").read_text())
    manifest["experiment"]["dataset"]["path"] = str(root / "ssli-set")
    (copy / "manifest.json").write_text(json.dumps(manifest))
    return root


@pytest.fixture(scope="module")
def server(corpus: Path, experiments: Path, fresh_home, tmp_path_factory):
    if not Path(CHROMIUM).is_file():
        pytest.skip("Debian chromium is not installed (apt-get install chromium)")
    home = fresh_home(tmp_path_factory.mktemp("home"))
    env = {
        **os.environ,
        "SCIERA_HOME": str(home),
        "HF_HUB_OFFLINE": "1",
        # small for 2 cores: 5 BM25 candidates, the best one kept and summarised
        "SCIERA_RETRIEVE__RETRIEVER": "bm25",
        "SCIERA_RERANK__DEPTH": "5",
        "SCIERA_FILTER__TAU": "0",
        "SCIERA_FILTER__TOP_K": "1",
    }
    if not os.environ.get("SCIERA_SCREENSHOT"):
        # the 0.5B: this test is about the page, not answer quality; the README's
        # screenshot (SCIERA_SCREENSHOT) shows the default 1.5B's answer
        env["SCIERA_LLM__MODEL"] = "qwen2.5-coder-0.5b-instruct-q4_k_m"
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        port = s.getsockname()[1]
    args = [sciera_exe(), "serve", "--corpus", str(corpus), "--port", str(port)]
    args += ["--experiments", str(experiments)]
    log = (home / "serve.log").open("w")
    proc = subprocess.Popen(args, env=env, stdout=log, stderr=subprocess.STDOUT)
    url = f"http://127.0.0.1:{port}"
    try:
        deadline = time.monotonic() + 120
        while True:
            try:
                with urllib.request.urlopen(url + "/healthz", timeout=2) as r:
                    if r.status == 200:
                        break
            except OSError:
                pass
            assert proc.poll() is None, (home / "serve.log").read_text()
            assert time.monotonic() < deadline, "server did not start"
            time.sleep(0.5)
        yield url
    finally:
        proc.terminate()
        proc.wait(timeout=30)
        log.close()


@pytest.fixture(scope="module")
def page(server: str):
    sync_api = pytest.importorskip("playwright.sync_api")
    with sync_api.sync_playwright() as pw:
        browser = pw.chromium.launch(
            executable_path=CHROMIUM,
            args=[
                "--no-sandbox",
                "--disable-gpu",
                "--disable-background-networking",
                "--disable-component-update",
                "--disable-sync",
            ],
        )
        page = browser.new_page(viewport={"width": 1200, "height": 1400})
        errors: list[str] = []
        page.on("pageerror", lambda exc: errors.append(str(exc)))
        page.goto(server + "/")
        yield page
        browser.close()
        assert not errors, errors


def texts_by_doc(corpus: Path) -> dict[str, str]:
    """Each record's abstract text in the slice the server serves."""
    lines = (corpus.parent / "corpus.jsonl").read_text(encoding="utf-8").splitlines()
    return {r["_id"]: r["text"] for r in map(json.loads, lines)}


def quoted_sentences(card) -> list[tuple[int, str]]:
    """(index, text) of each rationale sentence a card quotes."""
    out = []
    for item in card.locator(".rationales li").all():
        label = item.locator(".sent-n").inner_text()
        assert label.startswith("sentence "), label
        out.append((int(label.split()[1]), item.locator("q").inner_text()))
    return out


def assert_sentences_headed(card, undecided: bool) -> None:
    """An abstract decided NOT ENOUGH INFO heads its sentences as its closest, not as
    rationales (the heading is upper-cased by CSS only)."""
    heading = card.locator(".rationales h4").inner_text().lower()
    assert heading.startswith("closest sentences" if undecided else "rationale sentences")


def test_ask_streams_stages_and_shows_cited_evidence_safely(page, corpus, tmp_path):
    page.wait_for_selector("#corpus option", state="attached")
    page.get_by_role("textbox", name="Question").fill(QUESTION)
    page.get_by_role("button", name="Ask").click()
    page.wait_for_selector("#stage-answer.done", timeout=600_000)
    assert page.locator("#ask-error").is_hidden()
    # a yes/no question is verified: the Verify stage shows between reranking and the evidence
    stages = page.locator("#stages li")
    assert stages.count() == 5 and page.locator("#stages li.done").count() == 5
    ids = [stages.nth(i).get_attribute("id") for i in range(5)]
    assert ids == [
        f"stage-{n}" for n in ("retrieved", "reranked", "verified", "evidence", "answer")
    ]
    assert "5 candidates" in page.locator("#stage-retrieved").inner_text()
    assert page.locator("#answer").inner_text().strip()
    # the verdict line: its label, confidence, and that the verifier decided
    verdict = page.locator("#verdict")
    assert verdict.is_visible()
    assert verdict.locator(".badge").inner_text() in LABELS
    assert re.search(r"confidence [01]\.\d\d", verdict.inner_text())
    assert "decided by the verifier" in verdict.inner_text()
    kept = page.locator("#evidence article.card")
    assert kept.count() == 1
    assert kept.first.get_attribute("id") == "ev-1"
    assert f"{GOLD}#0" in kept.first.inner_text()
    # a verified question's card quotes its sentences: the paper's text, no LLM summary
    headings = kept.first.locator("h4").all_text_contents()  # shown upper-case by CSS
    assert headings[-1] == "Original text" and "Summary" not in headings
    assert "rationale sentences quoted" in page.locator("#stage-evidence").inner_text()
    assert kept.first.locator(".texts p").first.inner_text().strip()
    # the rationale sentences of every cited card are verbatim sentences of its abstract
    abstracts = texts_by_doc(corpus)
    below = page.locator("#below article.card")
    for card in [*kept.all(), *below.all()]:
        doc = card.locator(".pid").inner_text().split("#")[0]
        for _, sentence in quoted_sentences(card):
            assert sentence and sentence in abstracts[doc], (doc, sentence)
        marks = card.locator(".texts mark").all_text_contents()
        assert set(marks) <= {t for _, t in quoted_sentences(card)}
        if quoted_sentences(card):
            badges = card.locator(".status .badge").all_text_contents()  # "LABEL 0.80"
            assert_sentences_headed(card, any(b.startswith("NOT ENOUGH INFO") for b in badges))
    # cited abstracts below tau are shown apart, each with the sentences it is cited for
    assert page.locator("#below-box").is_visible() == (below.count() > 0)
    if below.count():
        assert page.locator("#below-title").inner_text().endswith("cited for their sentences")
    for card in below.all():
        assert "cited for its sentences" in card.locator(".status").inner_text()
        assert quoted_sentences(card)
    # a citation link leads to its evidence card, and its sentences to theirs
    cite = page.locator("#citations a.cite").first
    marker = cite.inner_text().strip("[]")
    assert cite.get_attribute("href") == f"#ev-{marker}"
    cite.click()
    assert page.evaluate("location.hash") == f"#ev-{marker}"
    assert page.locator(f"#ev-{marker}").count() == 1
    for link in page.locator("#citations a:not(.cite)").all():
        assert page.locator(link.get_attribute("href")).count() == 1
    filtered = 4 - below.count()
    assert page.locator("#filtered-summary").inner_text() == f"Filtered out ({filtered})"
    # the hostile record is among the candidates: shown as text, never run
    page.locator("#filtered-summary").click()
    hostile = page.locator("article.card", has_text="hostile#0")
    assert hostile.count() == 1
    assert HOSTILE_TITLE in hostile.inner_text()
    assert page.evaluate("window.__pwned") is None
    assert page.locator("main script, main img").count() == 0
    page.screenshot(path=str(tmp_path / "ask.png"), full_page=True)
    if os.environ.get("SCIERA_SCREENSHOT"):
        page.screenshot(path=os.environ["SCIERA_SCREENSHOT"], full_page=True)
    # "Read in context" opens the card's paper with the cited passage marked, as text
    first = kept.first
    first.locator("button.context-open").click()
    here = first.locator(".context p.here")
    here.wait_for(timeout=30_000)
    doc = first.locator(".pid").inner_text().split("#")[0]
    shown = first.locator(".texts p").last.inner_text().strip()  # the card's passage
    assert here.inner_text().strip() == shown and shown in abstracts[doc]
    assert first.locator(".context p").count() >= 2  # the paper's other passages too
    first.screenshot(path=str(tmp_path / "context.png"))
    if os.environ.get("SCIERA_SCREENSHOT_CONTEXT"):
        first.screenshot(path=os.environ["SCIERA_SCREENSHOT_CONTEXT"])
    assert first.locator("button.context-open").inner_text() == "Hide the context"
    assert page.locator("main script, main img").count() == 0


def test_verify_view_shows_the_verdict_and_each_abstracts_sentences(page, server, corpus, tmp_path):
    page.get_by_role("link", name="Verify", exact=True).click()
    assert page.evaluate("location.hash") == "#verify"
    page.locator("#view-verify").wait_for()  # shown by the hashchange handler
    assert page.locator("#view-ask").is_hidden()
    page.wait_for_selector("#verify-corpus option", state="attached")
    page.get_by_role("textbox", name="Claim").fill(CLAIM)
    page.get_by_role("button", name="Verify").click()
    page.wait_for_selector("#vstage-verified.done", timeout=600_000)
    assert page.locator("#verify-error").is_hidden()
    assert page.locator("#verify-stages li.done").count() == 3
    # the page shows what the API returns (the verifier is deterministic)
    request = urllib.request.Request(
        server + "/v1/verify",
        data=json.dumps({"claim": CLAIM}).encode(),
        headers={"Content-Type": "application/json"},
    )
    with urllib.request.urlopen(request, timeout=600) as r:
        expected = json.load(r)
    overall = page.locator("#verify-verdict")
    assert overall.locator(".badge").inner_text() == expected["label"]
    assert f"confidence {expected['confidence']:.2f}" in overall.inner_text()
    assert "null" not in overall.inner_text()  # an absent line is left out, not written
    for doc in [*expected["supporting"], *expected["contradicting"]]:
        title = next(a["title"] for a in expected["abstracts"] if a["doc_id"] == doc)
        link = overall.get_by_role("link", name=title, exact=True)
        assert link.count() == 1
        target = page.locator(link.get_attribute("href"))
        assert target.locator(".pid").inner_text() == doc
    cards = page.locator("#verify-cards article.card")
    assert cards.count() == len(expected["abstracts"]) > 0
    abstracts = texts_by_doc(corpus)
    for card, want in zip(cards.all(), expected["abstracts"], strict=True):
        assert card.locator(".pid").inner_text() == want["doc_id"]
        assert card.locator(".title").inner_text() == want["title"]
        assert card.locator(".badge").inner_text() == want["label"]
        meter = card.locator("meter")
        assert float(meter.get_attribute("value")) == pytest.approx(want["confidence"], abs=1e-6)
        # a placeholder is never shown as the verdict model's reading
        assert ("Not read by the verdict model" in card.inner_text()) == (not want["read"])
        quoted = quoted_sentences(card)
        assert quoted == [(r["index"], r["text"]) for r in want["rationales"]]
        if quoted:
            assert_sentences_headed(card, want["label"] == "NOT ENOUGH INFO")
        for _, sentence in quoted:
            assert sentence in abstracts[want["doc_id"]]
    assert GOLD in [a["doc_id"] for a in expected["abstracts"]]
    hostile = cards.filter(has=page.locator(".pid", has_text=re.compile(r"^hostile$")))
    if "hostile" in [a["doc_id"] for a in expected["abstracts"]]:
        assert HOSTILE_TITLE in hostile.inner_text()
        hostile.locator("summary").click()  # the passage read, with its markup as text
        assert "onerror=" in hostile.inner_text()
    assert page.evaluate("window.__pwned") is None
    assert page.locator("main script, main img").count() == 0
    page.screenshot(path=str(tmp_path / "verify.png"), full_page=True)
    # a failed request shows on the error line and fails its stage (Ctrl+Enter submits)
    page.evaluate("document.getElementById('verify-corpus').append(new Option('nope', 'nope'))")
    page.select_option("#verify-corpus", "nope")
    page.get_by_role("textbox", name="Claim").press("Control+Enter")
    error = page.locator("#verify-error")
    error.wait_for()
    assert error.inner_text().startswith("404") and "nope" in error.inner_text()
    assert page.locator("#verify-stages li.failed").count() == 1
    assert page.locator("#verify-box").is_hidden()
    page.locator("#verify-corpus option[value='nope']").evaluate("o => o.remove()")


def test_experiments_view_lists_reports_with_tables_and_plots(page):
    page.get_by_role("link", name="Experiments").click()
    button = page.get_by_role("button", name="ssli_scifact_trained", exact=True)
    button.wait_for()
    button.click()
    table = page.locator("#exp-detail table")
    table.wait_for()
    assert table.locator("tbody tr").count() == 10  # 5 pipelines x (base, ssli)
    assert "cross_encoder" in table.inner_text()
    img = page.locator("#exp-detail img").first
    img.wait_for()
    page.wait_for_function(
        "() => [...document.querySelectorAll('#exp-detail img')]"
        ".every((i) => i.complete && i.naturalWidth > 0)"
    )


def test_ssli_view_shows_gold_and_distractors_with_every_rankers_scores(page):
    page.get_by_role("link", name="SSLI").click()
    page.wait_for_selector("#ssli-exp option[value='ssli_scifact_trained']", state="attached")
    page.select_option("#ssli-exp", "ssli_scifact_trained")
    page.wait_for_selector("#ssli-q option[value$='/ssli']", state="attached")
    # 96 questions with distractors (the experiment's distractors_only), plus the prompt
    assert page.locator("#ssli-q option").count() == 97
    page.select_option("#ssli-q", "1834762-p0-q2/ssli")
    gold = page.locator("#ssli-detail article.card.gold")
    gold.wait_for()
    distractors = page.locator("#ssli-detail article.card.distractor")
    assert gold.count() == 1 and distractors.count() >= 1
    assert "Distractor (" in distractors.first.inner_text()
    rows = gold.locator("tbody tr")
    assert rows.count() == 5  # bm25, cross_encoder, embedding_trained, hybrid, hybrid_trained
    ce = gold.locator("tbody tr", has_text="cross_encoder")
    assert ce.locator("td").nth(1).inner_text() == "1"  # the gold passage ranked first
