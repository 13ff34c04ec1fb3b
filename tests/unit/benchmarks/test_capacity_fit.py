"""benchmarks/perf/capacity.py: the power-law fit and extrapolation (capacity_report.py),
the synthetic corpus generator, and resuming from the rows already measured. Pure
functions, no models."""

from __future__ import annotations

import importlib
import itertools
import json
import math
from collections.abc import Iterator
from pathlib import Path
from types import ModuleType

import numpy as np
import pytest

PERF = Path(__file__).resolve().parents[3] / "benchmarks" / "perf"
ABSTRACTS = [
    "Vitamin D levels were measured in 120 adults. Bone density rose with vitamin D. "
    "The effect was larger in women.",
    "We studied tumor suppressor genes in 40 cell lines. TP53 was mutated in half of "
    "them. Mutations predicted a poor response to treatment. Further work is needed.",
    "Sleep loss impairs memory consolidation in mice.",
]


@pytest.fixture(scope="module")
def scale() -> Iterator[dict[str, ModuleType]]:
    """The benchmark's scripts, imported from benchmarks/perf (not a package)."""
    with pytest.MonkeyPatch.context() as patch:
        patch.syspath_prepend(str(PERF))
        names = ("capacity", "capacity_report", "capacity_steps", "synthetic_corpus")
        yield {name: importlib.import_module(name) for name in names}


@pytest.fixture(scope="module")
def model(scale: dict[str, ModuleType]) -> ModuleType:
    return scale["capacity_report"]


@pytest.fixture(scope="module")
def synth(scale: dict[str, ModuleType]) -> ModuleType:
    return scale["synthetic_corpus"]


# ---- fit and extrapolation -------------------------------------------------------------


def test_power_law_fit_recovers_a_and_b_from_exact_data(model: ModuleType) -> None:
    sizes = [1_000, 10_000, 100_000, 2_000_000]
    fit = model.fit_power_law(sizes, [3.5 * n**0.8 for n in sizes])
    assert fit.a == pytest.approx(3.5, rel=1e-9)
    assert fit.b == pytest.approx(0.8, rel=1e-9)
    assert fit.r2 == pytest.approx(1.0)
    assert fit.predict(60_000_000) == pytest.approx(3.5 * 60_000_000**0.8, rel=1e-9)


def test_r2_is_that_of_log_y(model: ModuleType) -> None:
    sizes, values = [1.0, 10.0, 100.0], [1.0, 20.0, 100.0]
    fit = model.fit_power_law(sizes, values)
    x, y = np.log(sizes), np.log(values)
    b, log_a = np.polyfit(x, y, 1)
    residual = np.sum((y - log_a - b * x) ** 2)
    assert fit.r2 == pytest.approx(1 - residual / np.sum((y - y.mean()) ** 2))
    assert fit.r2 < 1


def test_a_fit_needs_two_sizes_with_positive_values(model: ModuleType) -> None:
    assert model.fit_power_law([1_000], [5.0]) is None
    assert model.fit_power_law([1_000, 2_000], [5.0, 0.0]) is None  # no log of 0
    assert model.fit_power_law([1_000, 1_000], [5.0, 6.0]) is None
    fit = model.fit_power_law([1_000, 2_000, 4_000], [0.0, 2.0, 4.0])
    assert fit.sizes == (2_000.0, 4_000.0)
    assert fit.b == pytest.approx(1.0)


def test_metrics_are_fitted_on_passages_and_extrapolated(model: ModuleType) -> None:
    rows = [
        {"size": n, "step": "dense", "passages": n, "rss_delta_mb": 2e-3 * n, "p50_ms": 1.0}
        for n in (1_000, 4_000, 16_000)
    ]
    rows.append({"size": None, "step": "embed"})  # not a sized row: ignored
    fits = model.fit_metrics(rows, target=60_000_000)
    ram = fits["dense.ram"]
    assert ram["b"] == pytest.approx(1.0)
    assert ram["at_target"] == pytest.approx(120_000.0)  # MB
    assert ram["linear_from_largest"] == pytest.approx(120_000.0)
    assert fits["dense.p50"]["b"] == pytest.approx(0.0, abs=1e-12)
    assert "bm25.ram" not in fits


def test_plan_shows_the_analytic_dense_size_and_cites_the_fit(model: ModuleType) -> None:
    rows = [
        {"size": n, "step": "dense", "passages": n, "rss_delta_mb": 1.6e-3 * n}
        for n in (1_000, 2_000)
    ]
    fits = model.fit_metrics(rows, target=60_000_000)
    plan = model.plan_rows(fits, None, target=60_000_000, node_ram_gb=64.0)
    ram = next(r for r in plan if r["component"] == "dense flat (faiss), RAM")
    assert ram["analytic"] == pytest.approx(60_000_000 * 384 * 4 / 1e9)  # 92.16 GB
    assert ram["value"] == pytest.approx(96.0)  # GB
    assert ram["machines"] == 2  # ceil(96 / 64)
    assert ram["basis"].startswith("fit dense.ram: a=")
    bm25 = next(r for r in plan if r["component"] == "BM25 in memory, RAM")
    assert bm25["value"] is None and "not measured" in bm25["basis"]
    assert model.cost_drivers(plan)["ram"][0]["component"] == "dense flat (faiss), RAM"


def test_the_cluster_sketch_sums_plan_rows_into_machines(model: ModuleType) -> None:
    rows = [
        {"size": n, "step": s, "passages": n, f: 1e-3 * n}
        for n in (1_000, 2_000)
        for s, f in (("dense", "rss_delta_mb"), ("bm25", "load_rss_delta_mb"))
    ]
    plan = model.plan_rows(model.fit_metrics(rows), None, node_ram_gb=64.0)
    sketch = {line["what"]: line for line in model.cluster_sketch(plan, node_ram_gb=64.0)}
    serving = sketch["serving RAM, BM25 in memory + dense flat"]
    assert serving["value"] == pytest.approx(60.0 + 92.16)  # dense: the analytic size is larger
    assert serving["machines"] == 3
    assert sketch["serving RAM, BM25 mmap (queried) + dense flat"]["value"] is None


def test_embedding_hours_follow_the_rate_and_the_ray_efficiency(model: ModuleType) -> None:
    embed = {
        "embedder": "scifact-minilm",
        "threads": {"1": {"passages_per_s": 100.0}, "2": {"passages_per_s": 150.0}},
    }
    ray = {"efficiency": 0.8, "efficiency_basis": "steady"}
    plan = model.embedding_plan(embed, ray, target=60_000_000, workers=(8, 32))
    cpu_hours = 60_000_000 / 100 / 3600
    assert plan["cpu_hours"] == pytest.approx(cpu_hours)
    assert plan["hours_one_2_thread_process"] == pytest.approx(60_000_000 / 150 / 3600)
    assert plan["wall_hours"]["8"] == pytest.approx(cpu_hours / (8 * 0.8))
    alone = model.embedding_plan(embed, None, target=60_000_000, workers=(32,))
    assert alone["wall_hours"]["32"] == pytest.approx(cpu_hours / 32)


def test_steady_rate_starts_after_the_first_round_of_shards(
    scale: dict[str, ModuleType],
) -> None:
    steady_rate = scale["capacity_steps"].steady_rate
    marks = [(10.0, 256), (11.0, 512), (30.0, 768), (31.0, 1000)]
    assert steady_rate(marks, 1) == pytest.approx((1000 - 256) / (31 - 10))
    assert steady_rate(marks, 2) == pytest.approx((1000 - 512) / (31 - 11))
    assert steady_rate(marks, 4) is None


def test_ray_speedup_prefers_the_steady_rates(scale: dict[str, ModuleType]) -> None:
    speedup = scale["capacity"].ray_speedup
    one = {"steady_passages_per_s": 10.0, "end_to_end_passages_per_s": 5.0}
    two = {"steady_passages_per_s": 18.0, "end_to_end_passages_per_s": 6.0}
    assert speedup({"1": one, "2": two})["efficiency"] == pytest.approx(0.9)
    two["steady_passages_per_s"] = None  # too few shards
    result = speedup({"1": one, "2": two})
    assert result["speedup"] == pytest.approx(1.2) and "end-to-end" in result["efficiency_basis"]


def test_the_report_renders_as_markdown(scale: dict[str, ModuleType]) -> None:
    rows = [
        {"size": n, "step": "bm25", "passages": n, "disk_bytes": 900.0 * n, "search_p50_ms": 1.0}
        for n in (1_000, 2_000)
    ]
    meta = {
        "command": "capacity.py",
        "notes": ["a note"],
        "machine": {"cpus": 2, "memory_gb": 8.0, "python": "3.11"},
    }
    report = scale["capacity_report"].build_report(rows, meta)
    text = scale["capacity_report"].markdown(report)
    assert "## Plan for 60,000,000 passages" in text
    assert "| BM25 index (bm25s), disk | 54 GB |" in text
    json.dumps(report)  # the JSON report is serialisable


def test_a_fit_that_explains_too_little_is_not_extrapolated(model: ModuleType) -> None:
    rows = [
        {"size": n, "step": "bm25", "passages": n, "score_p50_ms": ms, "disk_bytes": 900.0 * n}
        for n, ms in ((1_000, 12.0), (3_000, 2.5), (5_000, 3.7))  # latency on a loaded CPU
    ]
    plan = {r["metric"]: r for r in model.plan_rows(model.fit_metrics(rows), None)}
    noisy = plan["bm25.score_p50"]
    assert noisy["value"] is None and "not extrapolated" in noisy["basis"]
    assert "1,000: 12 ms" in noisy["basis"]
    assert plan["bm25.disk"]["value"] == pytest.approx(54.0)  # a clean fit still plans
    flat = [
        {**r, "step": "bm25_mmap", "load_rss_delta_mb": mb}
        for r, mb in zip(rows, (6.75, 6.70, 6.76), strict=True)
    ]
    mmap = {r["metric"]: r for r in model.plan_rows(model.fit_metrics(flat), None)}
    assert mmap["bm25_mmap.ram"]["value"] == pytest.approx(0.00676)  # flat: the largest, in GB
    assert "flat over" in mmap["bm25_mmap.ram"]["basis"]


def test_qdrant_edge_rows_enter_the_plan_and_their_own_table(
    scale: dict[str, ModuleType],
) -> None:
    def edge(n: int) -> dict:
        return {
            "size": n,
            "step": "qdrant_edge",
            "passages": n,
            "upsert_seconds": 0.001 * n,
            "index_seconds": 0.002 * n,
            "build_seconds": 0.003 * n,
            "disk_bytes": 2_000.0 * n,
            "load_rss_delta_mb": 0.001 * n,
            "queried_rss_delta_mb": 0.0015 * n,
            "sparse_p50_ms": 0.5,
            "hybrid_p50_ms": 2.0,
            "hnsw_recall_at_10": 0.91,
            "hnsw_ef_sweep": {
                "64": {"recall_at_10": 0.8, "p50_ms": 1.0},
                "512": {"recall_at_10": 0.99, "p50_ms": 4.0},
            }
            if n == 1_000
            else None,
            "bm25_parity_max_abs_diff": 3e-6,
            "bm25_parity_claims_differing": 0,
            "bm25_parity_claims": 200,
        }

    meta = {"command": "c", "notes": [], "machine": {"cpus": 2, "memory_gb": 8.0, "python": "3"}}
    model = md = scale["capacity_report"]
    report = model.build_report([edge(1_000), edge(10_000)], meta)
    plan = {r["metric"]: r for r in report["plan"]}
    assert plan["qdrant_edge.disk"]["value"] == pytest.approx(120.0)  # 60M x 2 kB in GB
    assert plan["qdrant_edge.build_seconds"]["value"] == pytest.approx(50.0)  # 180,000 s in h
    assert "qdrant.disk" not in plan  # local mode was not measured: no row for it
    text = md.markdown(report)
    assert "| 10,000 | 16 | 10 | 20 | 20 | – | 10 (15) | – / – | – | 0.91 | – |" in text
    assert "3.0e-06 (0 of 200)" in text
    assert "| 0.8 / 0.99 (1 / 4) |" in text
    without = model.build_report([], meta)
    assert not [r for r in without["plan"] if r["metric"].startswith("qdrant_edge")]
    flat = [{**edge(n), "step": "qdrant_edge_flat", "hnsw_m": 0} for n in (1_000, 10_000)]
    both = model.build_report([edge(1_000), edge(10_000), *flat], meta)
    assert {r["metric"] for r in both["plan"]} >= {"qdrant_edge.disk", "qdrant_edge_flat.disk"}
    assert "| 10,000 | 0 | 10 |" in md.markdown(both)


def test_edge_vectors_follow_the_spectrum_of_the_real_ones(
    scale: dict[str, ModuleType], tmp_path: Path
) -> None:
    faiss = pytest.importorskip("faiss")
    edge = scale["capacity_steps"]
    rng = np.random.default_rng(0)
    scales = np.array([3.0, 1.0] + [0.1] * 6)  # two directions carry the variance
    real = (rng.standard_normal((4000, 8)) * scales + 0.5).astype(np.float32)
    folder = tmp_path / "c" / "index" / "dense-emb"
    folder.mkdir(parents=True)
    index = faiss.IndexFlatIP(8)
    index.add(real)
    faiss.write_index(index, str(folder / "index.faiss"))
    stats = edge.fit_vector_model([tmp_path / "c", tmp_path / "missing"], tmp_path / "m.npz")
    assert stats["embedder"] == "emb" and stats["vectors"] == 4000
    assert 1.0 < stats["participation_ratio"] < 2.0  # the spectrum's two strong directions
    drawn = edge.ModelEmbedder(tmp_path / "m.npz", seed=1).embed_passages(["x"] * 4000)
    assert np.allclose(np.linalg.norm(drawn, axis=1), 1.0, atol=1e-5)
    again = edge.ModelEmbedder(tmp_path / "m.npz", seed=1).embed_passages(["x"] * 4000)
    assert np.array_equal(drawn, again)  # deterministic for a seed
    # normalised draws keep the real vectors' direction of largest spread
    top = np.linalg.eigh(np.cov(drawn, rowvar=False))[1][:, -1]
    assert abs(top[0]) > 0.9
    with pytest.raises(SystemExit, match="no dense index"):
        edge.fit_vector_model([tmp_path / "missing"], tmp_path / "n.npz")


# ---- the synthetic corpus --------------------------------------------------------------


def test_the_generator_is_deterministic_for_a_seed(synth: ModuleType) -> None:
    pool = synth.sentence_pool(ABSTRACTS)
    first = [doc for doc, _, _ in synth.generate(pool, 50, seed=7)]
    again = [doc for doc, _, _ in synth.generate(pool, 50, seed=7)]
    other = [doc for doc, _, _ in synth.generate(pool, 50, seed=8)]
    assert first == again and first != other
    assert len(first) == 50 and len({d["_id"] for d in first}) == 50
    # a smaller corpus is a prefix of a larger one
    assert [doc for doc, _, _ in synth.generate(pool, 10, seed=7)] == first[:10]


def test_documents_are_pool_sentences_within_the_word_limit(synth: ModuleType) -> None:
    pool = synth.sentence_pool(ABSTRACTS)
    assert pool.abstract_sentences.tolist() == [3, 4, 1]
    for doc, words, _ in synth.generate(pool, 200, seed=0, max_words=20):
        assert len(doc["text"].split()) == words
        assert words <= 20 or doc["text"] in pool.sentences  # one sentence may exceed it
        assert 0 < len(doc["title"].split()) <= synth.TITLE_WORDS


def test_real_abstracts_give_pubmed_like_lengths(synth: ModuleType, shared_data: Path) -> None:
    pool = synth.sentence_pool(itertools.islice(synth.real_abstracts(shared_data), 300))
    words = [w for _, w, _ in synth.generate(pool, 500, seed=0)]
    assert 5 <= pool.abstract_sentences.mean() <= 15
    assert 120 <= np.mean(words) <= synth.MAX_WORDS


def test_write_corpus_writes_beir_lines_and_stats(synth: ModuleType, tmp_path: Path) -> None:
    pool = synth.sentence_pool(ABSTRACTS)
    path = tmp_path / "src" / "corpus.jsonl"
    stats = synth.write_corpus(pool, 25, seed=1, path=path)
    docs = [json.loads(line) for line in path.read_text(encoding="utf-8").splitlines()]
    assert len(docs) == stats["documents"] == 25
    assert set(docs[0]) == {"_id", "title", "text"}
    mean = sum(len(d["text"].split()) for d in docs) / 25
    assert stats["words_per_passage_mean"] == pytest.approx(mean, abs=0.05)


# ---- resuming --------------------------------------------------------------------------


def test_a_rerun_skips_the_rows_already_measured(
    scale: dict[str, ModuleType], tmp_path: Path
) -> None:
    capacity = scale["capacity"]
    rows = tmp_path / "rows.jsonl"
    plan = capacity.schedule([2_000, 1_000], ["ingest", "embed", "qdrant"])
    assert plan == [(None, "embed"), (1_000, "ingest"), (1_000, "qdrant"), (2_000, "ingest"),
                    (2_000, "qdrant")]  # fmt: skip
    calls: list[tuple[int | None, str]] = []

    def measure(size: int | None, step: str) -> dict | None:
        calls.append((size, step))
        return None if (size, step) == (2_000, "qdrant") else {"passages": size}

    log: list[str] = []
    assert capacity.run_schedule(plan, rows, measure, log=log.append) == 4
    assert len(calls) == 5
    calls.clear()
    assert capacity.run_schedule(plan, rows, measure, log=log.append) == 0
    assert calls == [(2_000, "qdrant")]  # only the pair that wrote no row
    kept = rows.read_text(encoding="utf-8").splitlines()
    rows.write_text("\n".join(kept[:-1]) + "\n", encoding="utf-8")  # forget the last row
    calls.clear()
    assert capacity.run_schedule(plan, rows, measure, log=log.append) == 1
    assert calls == [(2_000, "ingest"), (2_000, "qdrant")]
    assert [(r["size"], r["step"]) for r in capacity.read_rows(rows)] == [
        (None, "embed"), (1_000, "ingest"), (1_000, "qdrant"), (2_000, "ingest")
    ]  # fmt: skip


def test_the_time_limit_stops_between_steps(scale: dict[str, ModuleType], tmp_path: Path) -> None:
    capacity = scale["capacity"]
    plan = capacity.schedule([1_000], ["ingest", "bm25"])
    written = capacity.run_schedule(
        plan, tmp_path / "rows.jsonl", lambda size, step: {}, deadline=-math.inf, log=print
    )
    assert written == 0 and not (tmp_path / "rows.jsonl").exists()
