"""`sciera eval run` + `sciera eval report` on real SciFact: BM25 vs hybrid, no LLM.

The experiment is benchmarks/experiments/scifact_first_stage.yaml (50 seeded test
claims over the full corpus) pointed at a session-scoped ingested + indexed corpus.
The table's numbers must equal sciera.eval.evaluate on the TREC run files it wrote.
"""

from __future__ import annotations

import json
import shutil
import subprocess
import sys
from pathlib import Path

import pytest
import yaml

from sciera.corpus import load_qrels
from sciera.eval.metrics import evaluate
from sciera.eval.retrieval import read_trec_run

pytestmark = [pytest.mark.e2e, pytest.mark.integration]
REPO = Path(__file__).resolve().parents[2]
EXAMPLE = REPO / "benchmarks" / "experiments" / "scifact_first_stage.yaml"


def sciera(*args: str) -> subprocess.CompletedProcess[str]:
    exe = shutil.which("sciera") or str(Path(sys.executable).parent / "sciera")
    return subprocess.run([exe, *args], capture_output=True, text=True, timeout=900)


@pytest.fixture(scope="module")
def experiment_results(
    scifact_full_corpus: Path, scifact_dir: Path, tmp_path_factory: pytest.TempPathFactory
) -> Path:
    spec = yaml.safe_load(EXAMPLE.read_text())
    spec["dataset"]["path"] = str(scifact_dir)
    spec["corpus"] = str(scifact_full_corpus)
    spec["settings"]["embed"] = {"backend": "scifact-minilm"}  # the session corpus's index
    folder = tmp_path_factory.mktemp("experiment")
    (folder / "exp.yaml").write_text(yaml.safe_dump(spec))
    out = folder / "results"
    proc = sciera("eval", "run", str(folder / "exp.yaml"), "--out", str(out))
    assert proc.returncode == 0, proc.stderr
    print(proc.stdout)
    return out


def test_table_equals_evaluate_on_the_written_runs(experiment_results: Path, scifact_dir) -> None:
    table = json.loads((experiment_results / "report" / "table.json").read_text())
    dataset = json.loads((experiment_results / "dataset.json").read_text())
    qids = list(dataset["queries"])
    assert len(qids) == 50
    qrels_all = load_qrels(scifact_dir / "qrels" / "test.tsv")
    qrels = {q: qrels_all[q] for q in qids}
    metrics = ["ndcg@10", "recall@100", "map@10", "mrr@10", "hit@5"]
    rows = {r["pipeline"]: r for r in table["rows"]}
    assert set(rows) == {"bm25", "hybrid"}
    for name, row in rows.items():
        run = read_trec_run(experiment_results / "runs" / name / "r0" / "run.trec")
        assert set(run) == set(qids) and all(len(d) == 100 for d in run.values())
        expected = evaluate(run, qrels, metrics)
        for m in metrics:
            assert row["cells"][m]["mean"] == pytest.approx(expected[m], abs=1e-12), (name, m)
            assert row["cells"][m]["std"] == 0.0
        assert row["repeats"] == 1
        # far above a broken retriever; published full-set BM25 nDCG@10 is 0.68
        assert expected["ndcg@10"] > 0.55 and expected["recall@100"] > 0.85
        assert row["cells"]["s/q first_stage"]["mean"] > 0


def test_report_files_and_plots(experiment_results: Path) -> None:
    report = experiment_results / "report"
    md = (report / "table.md").read_text()
    assert "| bm25 | all | 50 | 1 |" in md and "**" in md
    header = (report / "table.csv").read_text().splitlines()[0]
    assert header.startswith("pipeline,setting,queries,repeats,ndcg@10 mean,ndcg@10 std")
    for name in ("rank_distribution", "metric_vs_k", "ablation"):
        png = report / f"{name}.png"
        assert png.read_bytes()[:8] == b"\x89PNG\r\n\x1a\n" and png.stat().st_size > 10_000


def test_rerun_resumes_without_new_work(experiment_results: Path) -> None:
    before = (experiment_results / "runs" / "bm25" / "r0" / "results.jsonl").read_bytes()
    proc = sciera(
        "eval",
        "run",
        str(experiment_results.parent / "exp.yaml"),
        "--out",
        str(experiment_results),
        "--no-report",
    )
    assert proc.returncode == 0, proc.stderr
    assert "ran 0 question runs, resumed past 100" in proc.stdout
    after = (experiment_results / "runs" / "bm25" / "r0" / "results.jsonl").read_bytes()
    assert after == before


def test_one_pipeline_alone_and_an_unknown_one_refused(experiment_results: Path) -> None:
    exp = str(experiment_results.parent / "exp.yaml")
    out = str(experiment_results)
    proc = sciera("eval", "run", exp, "--out", out, "--pipeline", "hybrid", "--no-report")
    assert proc.returncode == 0, proc.stderr
    assert "ran 0 question runs, resumed past 50" in proc.stdout
    manifest = json.loads((experiment_results / "manifest.json").read_text())
    assert [p["name"] for p in manifest["experiment"]["pipelines"]] == ["bm25", "hybrid"]

    proc = sciera("eval", "run", exp, "--out", out, "--pipeline", "splade", "--no-report")
    assert proc.returncode != 0 and "Traceback" not in proc.stderr
    assert "'splade' is not in experiment" in proc.stderr and "bm25, hybrid" in proc.stderr


def test_report_against_a_named_baseline(experiment_results: Path) -> None:
    import numpy as np
    from scipy import stats

    from sciera.eval.metrics import evaluate_per_query

    proc = sciera("eval", "report", str(experiment_results), "--no-plots", "--baseline", "hybrid")
    assert proc.returncode == 0, proc.stderr
    assert "### Against hybrid, question by question" in proc.stdout
    sig = json.loads((experiment_results / "report" / "significance.json").read_text())
    row = next(c for c in sig if c["pipeline"] == "bm25" and c["metric"] == "ndcg@10")
    # the same test by scipy on the per-question scores of the written runs
    dataset = json.loads((experiment_results / "dataset.json").read_text())
    qrels = {q: dataset["qrels"][q] for q in dataset["queries"]}
    per = {
        name: evaluate_per_query(
            read_trec_run(experiment_results / "runs" / name / "r0" / "run.trec"),
            qrels,
            ["ndcg@10"],
        )
        for name in ("bm25", "hybrid")
    }
    a = np.array([per["hybrid"][q]["ndcg@10"] for q in qrels])
    b = np.array([per["bm25"][q]["ndcg@10"] for q in qrels])
    assert row["diff"] == pytest.approx(b.mean() - a.mean(), abs=1e-12)
    ref = stats.permutation_test(
        (b, a), lambda x, y: np.mean(x - y), permutation_type="samples", n_resamples=100_000
    ).pvalue
    assert row["p_value"] == pytest.approx(ref, abs=0.01)  # both Monte Carlo, 1e5 resamples

    bad = sciera("eval", "report", str(experiment_results), "--no-plots", "--baseline", "nope")
    assert bad.returncode != 0
    assert "baseline 'nope' is not a pipeline" in bad.stderr + bad.stdout


@pytest.mark.nightly
def test_a_run_killed_mid_way_resumes_to_the_same_table(
    experiment_results: Path, tmp_path: Path
) -> None:
    """`kill -9` once some questions are logged; the same command again finishes the run
    and its table equals the uninterrupted run's (timings aside)."""
    import signal
    import time

    spec = experiment_results.parent / "exp.yaml"
    out = tmp_path / "results"
    exe = shutil.which("sciera") or str(Path(sys.executable).parent / "sciera")
    proc = subprocess.Popen([exe, "eval", "run", str(spec), "--out", str(out)])
    log = out / "runs" / "bm25" / "r0" / "results.jsonl"
    deadline = time.monotonic() + 600
    while not (log.is_file() and len(log.read_text().splitlines()) >= 10):
        assert proc.poll() is None, "the run ended before it could be killed"
        assert time.monotonic() < deadline
        time.sleep(0.05)
    proc.send_signal(signal.SIGKILL)
    proc.wait(timeout=30)
    logged = len(log.read_text().splitlines())
    assert 10 <= logged < 50  # killed in the middle of the first pipeline
    again = sciera("eval", "run", str(spec), "--out", str(out))
    assert again.returncode == 0, again.stderr

    def cells(folder: Path) -> dict:
        table = json.loads((folder / "report" / "table.json").read_text())
        return {
            r["pipeline"]: {k: v for k, v in r["cells"].items() if not k.startswith("s/q")}
            for r in table["rows"]
        }

    assert cells(out) == cells(experiment_results)
