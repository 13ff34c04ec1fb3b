"""Differential tests: sciera's ranking metrics against pytrec_eval (trec_eval).

Real runs: BM25 (bm25s, k1 = 0.9, b = 0.4, English stemmer and stopwords) over
the full BEIR SciFact corpus scored on ``qrels/test.tsv``, and over NFCorpus dev
(graded 0-2 TREC qrels) for graded nDCG. Every per-query value and every mean
must agree to 1e-6.
"""

from __future__ import annotations

import csv
import json
import random
from collections.abc import Iterable
from pathlib import Path

import pytest

from sciera.eval.metrics import evaluate, evaluate_per_query, trec_order

pytestmark = pytest.mark.integration

pytrec_eval = pytest.importorskip("pytrec_eval")

TOL = 1e-6
# sciera spec -> pytrec_eval measure (mrr@10 is recip_rank on the run cut to its top 10)
TREC_NAMES = {
    "ndcg@10": "ndcg_cut_10",
    "map@10": "map_cut_10",
    "recall@100": "recall_100",
    "precision@5": "P_5",
    "ndcg@20": "ndcg_cut_20",
    "ndcg": "ndcg",
    "map": "map",
    "mrr": "recip_rank",
}
Run = dict[str, dict[str, float]]
Qrels = dict[str, dict[str, int]]


def bm25_run(doc_ids: list[str], texts: list[str], queries: dict[str, str], k: int) -> Run:
    bm25s = pytest.importorskip("bm25s")
    stemmer_mod = pytest.importorskip("Stemmer")
    stemmer = stemmer_mod.Stemmer("english")
    corpus_tokens = bm25s.tokenize(texts, stopwords="en", stemmer=stemmer, show_progress=False)
    retriever = bm25s.BM25(k1=0.9, b=0.4)
    retriever.index(corpus_tokens, show_progress=False)
    qids = list(queries)
    query_tokens = bm25s.tokenize(
        [queries[q] for q in qids], stopwords="en", stemmer=stemmer, show_progress=False
    )
    docs, scores = retriever.retrieve(query_tokens, k=k, show_progress=False, n_threads=1)
    return {
        qid: {doc_ids[int(d)]: float(s) for d, s in zip(docs[i], scores[i], strict=True)}
        for i, qid in enumerate(qids)
    }


def cut_run(run: Run, k: int) -> Run:
    """The run truncated to its top k in trec_eval order."""
    return {q: {d: docs[d] for d in trec_order(docs)[:k]} for q, docs in run.items()}


def reference_per_query(run: Run, qrels: Qrels, specs: Iterable[str]) -> dict[str, dict]:
    measures = {TREC_NAMES[s] for s in specs if s in TREC_NAMES}
    out = pytrec_eval.RelevanceEvaluator(qrels, measures).evaluate(run)
    cut10 = pytrec_eval.RelevanceEvaluator(qrels, {"recip_rank"}).evaluate(cut_run(run, 10))
    for qid, values in out.items():
        values["mrr@10"] = cut10[qid]["recip_rank"]
        for spec, name in TREC_NAMES.items():
            if name in values:
                values[spec] = values[name]
    return out


def assert_matches_trec_eval(run: Run, qrels: Qrels, specs: list[str]) -> dict[str, float]:
    ours = evaluate_per_query(run, qrels, specs)
    ref = reference_per_query(run, qrels, specs)
    assert set(ref) == set(qrels) & set(run)
    compared = 0
    for qid in qrels:
        for spec in specs:
            expected = ref[qid][spec] if qid in ref else 0.0  # trec_eval -c: missing = 0
            assert ours[qid][spec] == pytest.approx(expected, abs=TOL), (qid, spec)
            compared += 1
    assert compared == len(qrels) * len(specs)
    means = evaluate(run, qrels, specs)
    for spec in specs:
        ref_mean = sum(ref[q][spec] for q in ref) / len(qrels)
        assert means[spec] == pytest.approx(ref_mean, abs=TOL), spec
    return means


# ---------------------------------------------------------------- SciFact


def _read_jsonl(path: Path) -> list[dict]:
    with path.open(encoding="utf-8") as fh:
        return [json.loads(line) for line in fh if line.strip()]


def _read_beir_qrels(path: Path) -> Qrels:
    qrels: Qrels = {}
    with path.open(encoding="utf-8", newline="") as fh:
        for row in csv.DictReader(fh, delimiter="\t"):
            qrels.setdefault(row["query-id"], {})[row["corpus-id"]] = int(row["score"])
    return qrels


@pytest.fixture(scope="module")
def scifact(scifact_dir: Path) -> tuple[Run, Qrels]:
    corpus = _read_jsonl(scifact_dir / "corpus.jsonl")
    qrels = _read_beir_qrels(scifact_dir / "qrels" / "test.tsv")
    queries = {q["_id"]: q["text"] for q in _read_jsonl(scifact_dir / "queries.jsonl")}
    assert len(corpus) == 5183 and len(qrels) == 300
    run = bm25_run(
        [d["_id"] for d in corpus],
        [f"{d['title']} {d['text']}" for d in corpus],
        {q: queries[q] for q in qrels},
        k=1000,
    )
    return run, qrels


SCIFACT_SPECS = ["ndcg@10", "map@10", "mrr@10", "recall@100", "precision@5", "ndcg", "map", "mrr"]


def test_scifact_bm25_matches_pytrec_eval(scifact: tuple[Run, Qrels]) -> None:
    run, qrels = scifact
    means = assert_matches_trec_eval(run, qrels, SCIFACT_SPECS)
    # sanity against the published BM25 reference point (0.679, Pyserini flat)
    assert 0.64 < means["ndcg@10"] < 0.71


def test_scifact_missing_queries_count_as_zero(scifact: tuple[Run, Qrels]) -> None:
    run, qrels = scifact
    partial = dict(list(run.items())[::2])  # every other query dropped from the run
    assert_matches_trec_eval(partial, qrels, ["ndcg@10", "recall@100"])


# ---------------------------------------------------------------- NFCorpus dev (graded)


@pytest.fixture(scope="module")
def nfcorpus(shared_data: Path) -> tuple[Run, Qrels]:
    base = shared_data / "nfcorpus-dev"
    doc_ids, texts = [], []
    for line in (base / "dev.docs").read_text(encoding="utf-8").splitlines():
        doc_id, _, text = line.partition("\t")
        doc_ids.append(doc_id)
        texts.append(text)
    queries = dict(
        line.split("\t", 1)
        for line in (base / "dev.titles.queries").read_text(encoding="utf-8").splitlines()
    )
    qrels: Qrels = {}
    for line in (base / "dev.2-1-0.qrel").read_text(encoding="utf-8").splitlines():
        qid, _, doc_id, grade = line.split()
        qrels.setdefault(qid, {})[doc_id] = int(grade)
    return bm25_run(doc_ids, texts, {q: queries[q] for q in qrels if q in queries}, k=1000), qrels


def test_nfcorpus_graded_ndcg_matches_pytrec_eval(nfcorpus: tuple[Run, Qrels]) -> None:
    run, qrels = nfcorpus
    grades = {g for judged in qrels.values() for g in judged.values()}
    assert grades == {1, 2}  # graded: 2 = direct link, 1 = indirect
    assert_matches_trec_eval(run, qrels, ["ndcg@10", "ndcg@20", "ndcg", "map@10", "mrr@10"])


# ---------------------------------------------------------------- sciera eval retrieval


@pytest.fixture(scope="module")
def scifact_corpus(scifact_dir: Path, tmp_path_factory: pytest.TempPathFactory) -> Path:
    from sciera.corpus import ingest
    from sciera.retrieve import build_indexes

    corpus = tmp_path_factory.mktemp("scifact") / "corpus"
    ingest(scifact_dir, corpus)
    build_indexes(corpus, which=["bm25"])
    return corpus


@pytest.mark.parametrize("unit", ["document", "passage"])
def test_cli_eval_retrieval_agrees_with_trec_eval_on_its_run_file(
    scifact_dir: Path, scifact_corpus: Path, tmp_path: Path, unit: str
) -> None:
    from typer.testing import CliRunner

    import sciera.cli.eval_cmds  # noqa: F401  (registers `sciera eval`)
    from sciera.cli import app
    from sciera.corpus import PassageStore, load_qrels
    from sciera.eval.retrieval import passage_qrels, read_trec_run

    run_file = tmp_path / "run.trec"
    qrels_file = scifact_dir / "qrels" / "test.tsv"
    args = ["eval", "retrieval", "--corpus", str(scifact_corpus), "--queries", str(scifact_dir)]
    args += ["--qrels", str(qrels_file), "--retriever", "bm25", "--unit", unit]
    result = CliRunner().invoke(app, [*args, "--run-out", str(run_file), "--json"])
    assert result.exit_code == 0, result.output
    report = json.loads(result.stdout)
    assert report["queries"] == 300 and report["unit"] == unit
    assert list(report["metrics"]) == ["ndcg@10", "recall@100", "map@10", "mrr@10"]

    run, qrels = read_trec_run(run_file), load_qrels(qrels_file)
    if unit == "passage":
        assert all("#" in pid for docs in run.values() for pid in docs)
        with PassageStore.open(scifact_corpus) as store:
            qrels = passage_qrels(qrels, store.iter_passages())
    else:
        # published BM25 flat reference 0.679 (documents)
        assert 0.66 < report["metrics"]["ndcg@10"] < 0.70
    ref = reference_per_query(run, qrels, ["ndcg@10", "recall@100", "map@10"])
    for spec in ["ndcg@10", "recall@100", "map@10", "mrr@10"]:
        expected = sum(ref[q][spec] for q in ref) / len(qrels)
        assert report["metrics"][spec] == pytest.approx(expected, abs=TOL), spec

    bad = CliRunner().invoke(app, [*args, "--metrics", "ndcg@10,bleu"])
    assert bad.exit_code == 2 and "unknown metric 'bleu'" in bad.output


# ---------------------------------------------------------------- synthetic corner cases


def test_random_runs_with_ties_and_odd_judgments_match_pytrec_eval() -> None:
    rng = random.Random(7)
    docs = [f"d{i:02d}" for i in range(40)]
    qrels: Qrels = {}
    run: Run = {}
    for q in range(60):
        qid = f"q{q}"
        # grades -1..3, some queries with only grade-0 judgments
        judged = rng.sample(docs, rng.randint(1, 12))
        qrels[qid] = {d: rng.choice([-1, 0, 0, 1, 2, 3]) for d in judged}
        if q % 7 == 0:
            qrels[qid] = {d: 0 for d in judged}
        if q % 5 != 0:  # every fifth query is missing from the run
            retrieved = rng.sample(docs, rng.randint(1, 40))
            run[qid] = {d: float(rng.randint(0, 5)) for d in retrieved}  # many ties
    run["unjudged"] = {"d01": 1.0}
    assert_matches_trec_eval(run, qrels, [*SCIFACT_SPECS, "ndcg@20"])
