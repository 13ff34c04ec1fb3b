"""`sciera eval run --ray` on a real Ray cluster on loopback (head + one worker node):
questions are answered in shards by actors that build the pipeline themselves (BM25, and
BM25 + the shipped cross-encoder); a driver killed part-way keeps what it logged, the Ray
run answers only the missing questions, and the outputs equal a single-process run's."""

from __future__ import annotations

import json
import random
from pathlib import Path

import pytest

from sciera.corpus import ingest, load_qrels
from sciera.eval.experiment import parse_experiment
from sciera.eval.retrieval import read_trec_run
from sciera.eval.runner import run_experiment
from sciera.retrieve import build_indexes
from sciera.scale.executor import RayExecutor
from sciera.scale.options import RayOptions
from sciera.settings import load_settings

pytestmark = pytest.mark.integration
pytest.importorskip("ray")
N_CLAIMS = 20
N_OTHER = 200
SHARD = 4
PIPELINES = [
    {"name": "bm25", "retriever": "bm25", "depth": 10},
    {
        "name": "ce",
        "retriever": "bm25",
        "depth": 10,
        "reranker": "cross_encoder",
        "rerank_depth": 10,
    },
]


@pytest.fixture(scope="module")
def claims(scifact_dir: Path, tmp_path_factory: pytest.TempPathFactory) -> tuple[Path, Path]:
    """A BEIR folder of 20 seeded SciFact test claims, and a corpus of their cited abstracts
    plus 200 others (ingested, BM25-indexed)."""
    qrels = load_qrels(scifact_dir / "qrels" / "test.tsv")
    picked = sorted(random.Random(3).sample(sorted(qrels), N_CLAIMS))
    texts = {}
    for line in (scifact_dir / "queries.jsonl").read_text(encoding="utf-8").splitlines():
        row = json.loads(line)
        texts[row["_id"]] = row["text"]
    folder = tmp_path_factory.mktemp("claims")
    (folder / "qrels").mkdir()
    (folder / "queries.jsonl").write_text(
        "".join(json.dumps({"_id": q, "text": texts[q]}) + "\n" for q in picked)
    )
    rows = [f"{q}\t{d}\t{g}" for q in picked for d, g in qrels[q].items()]
    (folder / "qrels" / "test.tsv").write_text("query-id\tcorpus-id\tscore\n" + "\n".join(rows))
    gold = {d for q in picked for d in qrels[q]}
    src = tmp_path_factory.mktemp("src")
    other = 0
    with (src / "corpus.jsonl").open("w", encoding="utf-8") as out:
        for line in (scifact_dir / "corpus.jsonl").read_text(encoding="utf-8").splitlines():
            doc = json.loads(line)["_id"]
            if doc in gold or other < N_OTHER:
                other += doc not in gold
                out.write(line + "\n")
    corpus = tmp_path_factory.mktemp("corpus")
    ingest(src, corpus, format="beir")
    build_indexes(corpus, load_settings(), which=("bm25",))
    return folder, corpus


def _experiment(folder: Path, corpus: Path):
    spec = {
        "name": "ray-eval",
        "dataset": {"type": "beir", "path": str(folder)},
        "corpus": str(corpus),
        "metrics": ["ndcg@10"],
        "repeats": 1,
        "pipelines": PIPELINES,
    }
    return parse_experiment(spec, "exp.yaml")


class DriverDied(Exception):
    pass


def test_ray_run_resumes_and_equals_the_single_process_run(ray_cluster, claims, tmp_path):
    exp = _experiment(*claims)
    alone = tmp_path / "alone"
    run_experiment(exp, alone)

    def die_after_seven(label: str, done: int, total: int) -> None:
        if done >= 7:
            raise DriverDied

    sharded = tmp_path / "sharded"
    with pytest.raises(DriverDied):
        run_experiment(exp, sharded, progress=die_after_seven)
    executor = RayExecutor(RayOptions(ray_cluster, shard_size=SHARD))
    with executor:
        summary = run_experiment(exp, sharded, executor=executor)
    assert summary.skipped == {"bm25/r0": 7, "ce/r0": 0}
    assert summary.ran == {"bm25/r0": N_CLAIMS - 7, "ce/r0": N_CLAIMS}
    for p in PIPELINES:
        folder = Path("runs") / p["name"] / "r0"
        lines = (sharded / folder / "results.jsonl").read_text().splitlines()
        assert len(lines) == len({json.loads(line)["qid"] for line in lines}) == N_CLAIMS
        a = read_trec_run(alone / folder / "run.trec")
        b = read_trec_run(sharded / folder / "run.trec")
        assert a.keys() == b.keys() and len(a) == N_CLAIMS
        for qid in a:
            ranked_a = sorted(a[qid].items(), key=lambda kv: -kv[1])
            ranked_b = sorted(b[qid].items(), key=lambda kv: -kv[1])
            assert [d for d, _ in ranked_a] == [d for d, _ in ranked_b]
            assert [s for _, s in ranked_a] == pytest.approx([s for _, s in ranked_b], abs=1e-4)
    with RayExecutor(RayOptions("127.0.0.1:1")) as nowhere:  # nothing left: no worker asked
        again = run_experiment(exp, sharded, executor=nowhere)
    assert sum(again.ran.values()) == 0


def test_a_bad_address_is_one_line(claims, tmp_path):
    from sciera.errors import ScieraError

    with (
        pytest.raises(ScieraError, match="cannot connect to the Ray cluster"),
        RayExecutor(RayOptions("127.0.0.1:1")) as executor,
    ):
        run_experiment(_experiment(*claims), tmp_path / "x", executor=executor)
