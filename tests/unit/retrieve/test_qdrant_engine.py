"""The qdrant engine (one collection: dense + BM25 sparse vectors + passages) against the
embedded engine (bm25s + faiss) on a small real store: the same BM25 scores, the same
dense scores, hybrid RRF with the same scores, and the manifest and option checks."""

from __future__ import annotations

import json
import math

import pytest

from sciera.errors import ScieraError, StaleIndexError
from sciera.retrieve.build import build_indexes
from sciera.retrieve.open import open_retriever
from sciera.retrieve.sparse_bm25 import SparseBM25
from sciera.settings import BM25Settings, load_settings

QUERIES = ["insulin resistance in muscle", "tumor suppressor genes", "gut microbiome diet", "zzz"]
DOCS = [  # varied words and lengths, so no two passages tie on a query
    ("d1", "Insulin resistance", "Insulin resistance lowers glucose uptake in skeletal muscle."),
    (
        "d2",
        "Muscle",
        "Resistance training builds muscle mass and strength in older adults over time.",
    ),
    ("d3", "Tumor suppressors", "TP53 is a tumor suppressor gene mutated in many cancers."),
    ("d4", "Genes", "Suppressor genes were screened in a large cohort of glioma tumor samples."),
    ("d5", "Microbiome", "The gut microbiome shifts with diet within days."),
    ("d6", "Diet", "A fibre rich diet changed stool bacteria and insulin levels in 40 volunteers."),
    ("d7", "Sleep", "Short sleep raised appetite hormones."),
    ("d8", "Vitamin D", "Vitamin D deficiency raises the risk of multiple sclerosis in adults."),
]


def test_sparse_weights_are_lucene_bm25_split_between_document_and_query():
    settings = BM25Settings(stemmer=None, stopwords=None)
    enc = SparseBM25.fit(["cat sat mat", "cat cat dog", "bird"], settings)
    assert enc.avgdl == pytest.approx(7 / 3) and enc.n == 3
    ids, weights = enc.document("cat cat dog")
    norm = 0.9 * (1 - 0.4 + 0.4 * 3 / (7 / 3))
    assert ids == sorted([enc.vocab["cat"], enc.vocab["dog"]])
    assert dict(zip(ids, weights, strict=True))[enc.vocab["cat"]] == pytest.approx(2 / (2 + norm))
    assert enc.query("cat cat unknown") == ([enc.vocab["cat"]], [2.0])
    with pytest.raises(ScieraError, match="lucene method only"):
        SparseBM25(BM25Settings(method="robertson"), {}, 1.0, 1)


def test_save_and_load_keep_the_encoder(tmp_path):
    enc = SparseBM25.fit(["alpha beta", "beta gamma delta"], BM25Settings())
    enc.save(tmp_path)
    back = SparseBM25.load(tmp_path)
    assert back.vocab == enc.vocab and back.avgdl == enc.avgdl and back.n == 2
    assert back.document("beta gamma") == enc.document("beta gamma")


@pytest.fixture(params=["edge", "client"])
def both(hash_embedder, tmp_path, request):
    from sciera.corpus.ingest import ingest

    data = tmp_path / "docs.jsonl"
    data.write_text(
        "".join(json.dumps({"_id": i, "title": t, "text": x}) + "\n" for i, t, x in DOCS)
    )
    small_corpus = tmp_path / "corpus"
    ingest(data, small_corpus, format="beir")
    home = {"home": str(tmp_path / "home"), "embed": {"cache": False}}
    embedded = load_settings(**home)
    qdrant = load_settings(index={"engine": "qdrant", "qdrant_local": request.param}, **home)
    build_indexes(small_corpus, embedded, embedder=hash_embedder)
    manifest = build_indexes(small_corpus, qdrant, embedder=hash_embedder)
    return small_corpus, embedded, qdrant, manifest


@pytest.mark.parametrize("kind", ["bm25", "dense", "hybrid"])
def test_the_qdrant_engine_scores_like_the_embedded_one(both, hash_embedder, kind):
    corpus, embedded, qdrant, _ = both
    # the hashed embedder gives 0 to passages sharing no word with the query, and engines
    # order such ties differently (so do their RRF ranks): only BM25 asks "zzz", and the
    # top 3 of each query are tie-free
    queries = QUERIES if kind == "bm25" else QUERIES[:-1]
    a = open_retriever(corpus, kind, embedded, embedder=hash_embedder).search_many(queries, 3)
    b = open_retriever(corpus, kind, qdrant, embedder=hash_embedder).search_many(queries, 3)
    for ra, rb in zip(a, b, strict=True):
        scores_a = {i.passage_id: i.score for i in ra}
        scores_b = {i.passage_id: i.score for i in rb}
        assert [i.passage_id for i in ra] == [i.passage_id for i in rb]
        assert all(math.isclose(scores_a[p], scores_b[p], abs_tol=1e-4) for p in scores_a)
    assert [r.items for r in b][-1] == () or kind != "bm25"  # "zzz" matches no token
    item = b[0].items[0]
    assert item.passage.text and item.passage.doc_id == item.passage_id.split("#")[0]


def test_the_manifest_records_one_collection_and_checks_settings(both, hash_embedder, tmp_path):
    corpus, _, qdrant, manifest = both
    record = manifest.records["qdrant-hash"]
    assert record.kind == "qdrant" and record.params["points"] == len(DOCS)
    assert record.params["engine"] == "qdrant" and record.params["bm25_k1"] == 0.9
    config = json.loads((corpus / "index" / "qdrant-hash" / "qdrant_engine.json").read_text())
    local = qdrant.index.qdrant_local
    assert record.params["local"] == local and config["dim"] == hash_embedder.dim
    # the config names where the collection lives: Edge's shard or the client's folder
    assert config == {**config, **({"edge": "edge"} if local == "edge" else {"path": "qdrant"})}
    assert (corpus / "index" / "qdrant-hash" / config.get("edge", config.get("path"))).is_dir()
    other_store = "client" if local == "edge" else "edge"
    moved = load_settings(
        index={"engine": "qdrant", "qdrant_local": other_store}, home=str(tmp_path / "home")
    )
    with pytest.raises(StaleIndexError):  # built in the other store: rebuild, never misread
        open_retriever(corpus, "bm25", moved, embedder=hash_embedder)
    other = load_settings(index={"engine": "qdrant"}, bm25={"k1": 1.2}, home=str(tmp_path / "home"))
    with pytest.raises(StaleIndexError):
        open_retriever(corpus, "bm25", other, embedder=hash_embedder)
    weighted = qdrant.model_copy(
        update={"retrieve": qdrant.retrieve.model_copy(update={"fusion": "weighted"})}
    )
    with pytest.raises(ScieraError, match="plain RRF"):
        open_retriever(corpus, "hybrid", weighted, embedder=hash_embedder)
    with pytest.raises(ScieraError, match="one collection"):
        build_indexes(corpus, qdrant, which=["bm25"], embedder=hash_embedder)


@pytest.mark.parametrize("kind", ["dense", "hybrid"])
def test_the_hnsw_beam_setting_reaches_the_store(both, hash_embedder, kind):
    corpus, _, qdrant, _ = both
    beam = qdrant.model_copy(
        update={"index": qdrant.index.model_copy(update={"qdrant_hnsw_ef": 8})}
    )
    engine = open_retriever(corpus, kind, beam, embedder=hash_embedder).engine
    searches = engine.requests(kind, QUERIES[:1], 3)
    assert searches[0].hnsw_ef == 8
    plain = open_retriever(corpus, kind, qdrant, embedder=hash_embedder)
    # 8 passages sit below any HNSW threshold: the beam changes nothing here
    assert [i.passage_id for i in engine.search(kind, QUERIES[:3], 3)[0]] == [
        i.passage_id for i in plain.search(QUERIES[0], 3)
    ]
    # both retrievers share the folder's one store (a local store locks its folder);
    # closing one leaves the other working, closing both closes the store
    assert plain.engine.store is engine.store
    engine.close()
    assert plain.search(QUERIES[0], 3).items
    plain.close()
    again = open_retriever(corpus, kind, qdrant, embedder=hash_embedder)
    assert again.engine.store is not engine.store and again.search(QUERIES[0], 3).items
    again.close()


def test_no_hnsw_graph_is_part_of_the_index_and_searches_exactly(both, hash_embedder):
    corpus, _, qdrant, _ = both
    before = open_retriever(corpus, "hybrid", qdrant, embedder=hash_embedder)
    expected = [[i.passage_id for i in r] for r in before.search_many(QUERIES[:3], 3)]
    before.close()
    flat = qdrant.model_copy(update={"index": qdrant.index.model_copy(update={"qdrant_hnsw_m": 0})})
    manifest = build_indexes(corpus, flat, embedder=hash_embedder)
    assert manifest.records["qdrant-hash"].params["hnsw_m"] == 0
    found = open_retriever(corpus, "hybrid", flat, embedder=hash_embedder)
    assert [[i.passage_id for i in r] for r in found.search_many(QUERIES[:3], 3)] == expected
    found.close()
    with pytest.raises(StaleIndexError):  # built without a graph: not the default index
        open_retriever(corpus, "hybrid", qdrant, embedder=hash_embedder)


def test_progress_brackets_the_final_indexing_after_the_points(both, hash_embedder):
    corpus, _, qdrant, _ = both
    calls: list[tuple[str, int, int]] = []
    build_indexes(corpus, qdrant, embedder=hash_embedder, progress=lambda *c: calls.append(c))
    assert calls[-3:] == [("qdrant", len(DOCS), len(DOCS)), ("qdrant_index", 0, 1),
                          ("qdrant_index", 1, 1)]  # fmt: skip


def test_auto_opens_a_corpus_indexed_only_by_the_qdrant_engine(tmp_path, hash_embedder):
    from sciera.corpus.ingest import ingest
    from sciera.retrieve.qdrant_engine import QdrantRetriever

    data = tmp_path / "docs.jsonl"
    data.write_text("".join(json.dumps({"_id": i, "text": x}) + "\n" for i, _, x in DOCS))
    ingest(data, tmp_path / "corpus", format="beir")
    home = {"home": str(tmp_path / "home"), "embed": {"cache": False}}
    build_indexes(
        tmp_path / "corpus",
        load_settings(index={"engine": "qdrant"}, **home),
        embedder=hash_embedder,
    )
    auto = load_settings(**home)
    assert auto.index.engine == "auto"
    found = open_retriever(tmp_path / "corpus", "bm25", auto, embedder=hash_embedder)
    assert isinstance(found, QdrantRetriever)
    assert found.search(QUERIES[0], 1).items[0].passage_id == "d1#0"
    embedded = load_settings(index={"engine": "embedded"}, **home)
    with pytest.raises(StaleIndexError):  # asked for explicitly, the embedded index is missing
        open_retriever(tmp_path / "corpus", "bm25", embedded, embedder=hash_embedder)
