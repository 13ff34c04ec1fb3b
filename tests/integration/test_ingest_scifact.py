"""Ingest the real BEIR SciFact corpus (5,183 abstracts) into a temporary corpus dir."""

from __future__ import annotations

import json
import math
from pathlib import Path

import pytest

from sciera.corpus import PassageStore, ingest, load_beir_qrels, load_beir_queries

pytestmark = pytest.mark.integration


@pytest.fixture(scope="module")
def scifact_store(scifact_dir: Path, tmp_path_factory: pytest.TempPathFactory):
    corpus = tmp_path_factory.mktemp("scifact-corpus")
    report = ingest(scifact_dir, corpus)
    return corpus, report


def test_documents_and_passages(scifact_dir: Path, scifact_store) -> None:
    corpus, report = scifact_store
    print(f"\nSciFact ingest: {report.summary()} ({report.passages_per_second:.0f} passages/s)")
    assert (report.added, report.updated, report.skipped) == (5183, 0, 0)
    word_counts = [
        len(json.loads(line)["text"].split())
        for line in (scifact_dir / "corpus.jsonl").read_text(encoding="utf-8").splitlines()
    ]
    at_least = sum(max(1, math.ceil(n / 250)) for n in word_counts)  # cut on words alone
    with PassageStore.open(corpus) as store:
        assert store.count_documents() == 5183
        passages = list(store.iter_passages())
    assert len(passages) == report.passages == 6231  # blingfire 0.1.8 sentence model
    assert len(passages) >= at_least
    assert len({p.passage_id for p in passages}) == len(passages)
    assert max(len(p.text.split()) for p in passages) <= 250
    assert sum(len(p.text.split()) for p in passages) == sum(word_counts)


def test_known_document_round_trips(scifact_dir: Path, scifact_store) -> None:
    corpus, _ = scifact_store
    first = json.loads((scifact_dir / "corpus.jsonl").open(encoding="utf-8").readline())
    assert first["_id"] == "4983"
    with PassageStore.open(corpus) as store:
        doc = store.get_document("4983")
        assert (doc.title, doc.text) == (first["title"], first["text"])
        own = [p for p in store.iter_passages() if p.doc_id == "4983"]
        assert own and [p.passage_id for p in own] == [f"4983#{i}" for i in range(len(own))]
        assert store.get_passages([p.passage_id for p in own]) == own
    assert own[0].title == first["title"]
    assert " ".join(p.text for p in own).split() == first["text"].split()


def test_reingest_adds_nothing(scifact_dir: Path, scifact_store) -> None:
    corpus, _ = scifact_store
    with PassageStore.open(corpus) as store:
        fingerprint = store.fingerprint()
    again = ingest(scifact_dir, corpus)
    assert (again.added, again.updated, again.passages, again.resumed_after) == (0, 0, 0, 5183)
    # the same documents from another path are compared by content hash
    copy = corpus.parent / "copy.jsonl"
    copy.write_bytes((scifact_dir / "corpus.jsonl").read_bytes())
    third = ingest(copy, corpus, format="beir")
    assert (third.added, third.updated, third.unchanged) == (0, 0, 5183)
    with PassageStore.open(corpus) as store:
        assert store.count_documents() == 5183
        assert store.fingerprint() == fingerprint


def test_beir_queries_and_qrels(scifact_dir: Path) -> None:
    queries = load_beir_queries(scifact_dir)
    assert len(queries) == 1109
    test, train = load_beir_qrels(scifact_dir, "test"), load_beir_qrels(scifact_dir, "train")
    assert (len(test), sum(len(v) for v in test.values())) == (300, 339)
    assert (len(train), sum(len(v) for v in train.values())) == (809, 919)
    assert set(test) <= set(queries)


def test_beir_ingest_keeps_the_splitter_sentences(scifact_store) -> None:
    from sciera.corpus.chunker import sentence_spans, unglue

    corpus, _ = scifact_store
    with PassageStore.open(corpus) as store:
        got = store.sentences(["4983", "13734012", "31715818"])
        rows = store.sentence_rows(["4983"])["4983"]
        passages = {p.passage_id: p.text for p in store.document_passages("4983")}
        text = store.get_document("4983").text
        n_sentences = store.count_sentences()
    # the splitter's sentences, cut again where BEIR's corpus.jsonl glues two together
    # ("disabilities.A line"), so nearly as many as corpus_sentences.jsonl lists (46,000
    # and more; the splitter alone finds fewer than 20,000)
    assert got["4983"][1] == [text[a:b] for a, b in unglue(text, sentence_spans(text))]
    assert 40000 <= n_sentences < 47000
    # a sentence lies in its passage, or (over 250 words) starts there and runs on
    for s in rows:
        body = passages[s.passage_id]
        assert s.text in body or any(s.text.startswith(body[i:]) for i in range(len(body)))


@pytest.fixture(scope="module")
def sentence_store(scifact_dir: Path, tmp_path_factory: pytest.TempPathFactory):
    corpus = tmp_path_factory.mktemp("scifact-sentences")
    report = ingest(scifact_dir / "corpus_sentences.jsonl", corpus)
    return corpus, report


def test_sentence_split_corpus_keeps_scifact_sentences(scifact_dir: Path, sentence_store) -> None:
    corpus, report = sentence_store
    assert report.format == "scifact-sentences"  # detected from the content
    assert (report.added, report.skipped) == (5183, 0)
    records = {}
    for line in (scifact_dir / "corpus_sentences.jsonl").read_text(encoding="utf-8").splitlines():
        rec = json.loads(line)
        records[str(rec["doc_id"])] = rec
    # three documents, one of them with sentences ending in spaces and a newline
    spaced = next(d for d, r in records.items() if any(s != s.strip() for s in r["abstract"]))
    wanted = ["4983", "13734012", spaced]
    with PassageStore.open(corpus) as store:
        got = store.sentences(wanted)
        assert store.count_documents() == 5183
        assert store.count_sentences() == sum(len(r["abstract"]) for r in records.values())
        passages = list(store.iter_passages())
        rows = store.sentence_rows(wanted)
        texts = {p.passage_id: p.text for p in passages}
    for doc_id in wanted:
        assert got[doc_id] == (records[doc_id]["title"], records[doc_id]["abstract"])
        assert all(s.text.strip() in texts[s.passage_id] for s in rows[doc_id])
    assert max(len(p.text.split()) for p in passages) <= 250


def test_rationale_indices_point_at_the_gold_sentences(scifact_dir: Path, sentence_store) -> None:
    """Every gold rationale index of the training claims names a stored sentence."""
    corpus, _ = sentence_store
    claims = [
        json.loads(line)
        for line in (scifact_dir / "claims_train.jsonl").read_text(encoding="utf-8").splitlines()
    ]
    cited = sorted({d for c in claims for d in c["evidence"]})
    with PassageStore.open(corpus) as store:
        found = store.sentences(cited)
    assert set(found) == set(cited)
    for c in claims:
        for doc_id, sets in c["evidence"].items():
            n = len(found[doc_id][1])
            assert all(0 <= i < n for s in sets for i in s["sentences"])
