"""`sciera train embedder RECIPE.yaml` end to end on real SciFact data with a tiny model built from
scratch (a two-layer BERT, mean pooling added by sentence-transformers): mining, the split
guard, the loop, dev selection, the card, a bare trained name found under SCIERA_HOME, the
re-embedding with `sciera index --embedder sentence-transformers --model NAME`, the
evaluation with `sciera eval retrieval --embedder-model NAME`, and the guard against an
index built with weights that were retrained since. Quality is measured by
benchmarks/experiments/scifact_embedder_shipped.yaml, not here.
"""

from __future__ import annotations

import json
import os
import subprocess

import pytest
from train_cli import N_QUERIES, SCIFACT, SHIPPED_SSLI, train_args

pytestmark = pytest.mark.e2e


def _run(args: list[str], env: dict) -> subprocess.CompletedProcess[str]:
    return subprocess.run(args, capture_output=True, text=True, timeout=900, env=env)


def test_train_tiny_embedder_index_and_evaluate(small_scifact, tiny_base, tmp_path):
    env = {**os.environ, "SCIERA_HOME": str(tmp_path / "home")}
    train = train_args(
        "embedder", small_scifact["corpus"], tiny_base, "tiny-embed", "train.batch_size=8"
    )
    done = _run([*train, "--set", "train.epochs=2"], env)
    assert done.returncode == 0, done.stderr
    model_dir = tmp_path / "home" / "models" / "tiny-embed"
    assert json.loads(done.stdout.strip().splitlines()[-1]) == {"model_dir": str(model_dir)}
    card = json.loads((model_dir / "sciera-card.json").read_text())
    assert card["kind"] == "dense retrieval embedder" and card["dim"] == 32
    assert [e["epoch"] for e in card["epochs"]] == [1, 2] and card["best_epoch"] in (1, 2)
    assert set(card["dev"]["modes"]) == {"first_stage", "base", "trained"}
    assert card["data"]["train_queries"] <= N_QUERIES and card["data"]["dev_queries"] >= 1
    kinds = {s["kind"]: s for s in card["splits"]["excluded"]}
    assert kinds["qrels"]["path"].endswith("test.tsv") and kinds["qrels"]["queries"] == 300
    test_qids = set((SCIFACT / "qrels" / "test.tsv").read_text().split())
    assert not set(card["data"]["dev_qids"]) & test_qids
    assert "Reproduce" in (model_dir / "README.md").read_text()

    corpus = str(small_scifact["corpus"])
    index = [
        train[0], "index", "--corpus", corpus, "--dense-only",
        "--embedder", "sentence-transformers", "--model", "tiny-embed",
    ]  # fmt: skip
    done = _run(index, env)
    assert done.returncode == 0, done.stderr
    manifest = json.loads((small_scifact["corpus"] / "index" / "manifest.json").read_text())
    record = manifest["indexes"]["dense-st-tiny-embed"]
    assert record["params"]["embedder"] == "st-tiny-embed" and record["params"]["weights"]
    evaluate = [
        train[0], "eval", "retrieval", "--corpus", corpus,
        "--queries", str(SCIFACT), "--qrels", str(SCIFACT / "qrels" / "train.tsv"),
        "--retriever", "dense", "--embedder", "sentence-transformers",
        "--embedder-model", "tiny-embed", "--metrics", "ndcg@10,hit@1", "--json",
    ]  # fmt: skip
    ev = _run(evaluate, env)
    assert ev.returncode == 0, ev.stderr
    assert json.loads(ev.stdout)["queries"] == 809

    # retrained under the same name: the index built with the old weights is refused
    done = _run([*train, "--set", "train.epochs=1", "--set", "train.seed=1", "--overwrite"], env)
    assert done.returncode == 0, done.stderr
    stale = _run(evaluate, env)
    assert stale.returncode != 0 and "index" in stale.stderr.lower()
    assert "Traceback" not in stale.stderr


def test_synthetic_queries_from_the_embedded_llm_join_training(small_scifact, tiny_base, tmp_path):
    """`--synthetic 3` with the embedded 0.5B: three abstracts get an LLM-written claim,
    filtered by the first stage; the card says how many were asked, written and kept, and
    the work folder's synthetic.jsonl makes a rerun ask the LLM nothing."""
    env = {**os.environ, "SCIERA_LLM__MODEL": "qwen2.5-coder-0.5b-instruct-q4_k_m"}
    out = tmp_path / "syn-embed"
    args = train_args(
        "embedder", small_scifact["corpus"], tiny_base, out,
        "train.batch_size=8", "train.epochs=1", "data.synthetic=3", "data.synthetic_keep_top=10",
    )  # fmt: skip
    done = _run(args, env)
    assert done.returncode == 0, done.stderr
    card = json.loads((out / "sciera-card.json").read_text())
    syn = card["data"]["synthetic"]
    assert syn["passages"] == 3 and 0 <= syn["kept"] <= syn["queries"] <= 3
    assert syn["llm"].startswith("llamacpp:qwen2.5-coder-0.5b") and syn["style"] == "claim"
    work = out.with_name(out.name + ".work")
    lines = (work / "synthetic.jsonl").read_text().splitlines()
    assert len(lines) == 3
    # synthetic sources are never gold abstracts of the test claims
    test_gold = {
        line.split("\t")[1]
        for line in (SCIFACT / "qrels" / "test.tsv").read_text().splitlines()[1:]
    }
    assert not {json.loads(x)["doc_id"] for x in lines} & test_gold
    out.with_name(out.name + ".recipe.json").unlink()  # its stage log: train again
    again = _run([*args, "--overwrite"], env)
    assert again.returncode == 0, again.stderr
    assert (work / "synthetic.jsonl").read_text().splitlines() == lines


def test_ssli_negatives_from_training_side_only(small_scifact, tiny_base, tmp_path, scifact_dir):
    """The shipped SSLI set is an evaluation set: given as training negatives it is refused
    (exit 2, the instance named). A training-side set (here two SciFact train claims with
    a hand-written distractor each: plumbing, not data quality) joins training."""
    from sciera.corpus import load_beir_queries, load_qrels

    env = dict(os.environ)
    args = train_args(
        "embedder", small_scifact["corpus"], tiny_base, tmp_path / "m", "train.epochs=1",
        "train.batch_size=8", f"data.exclude_ssli=[{SHIPPED_SSLI}]",
    )  # fmt: skip
    refused = _run([*args, "--set", f"data.ssli_negatives=[{SHIPPED_SSLI}]"], env)
    assert refused.returncode == 2 and "excluded from training" in refused.stderr
    assert "Traceback" not in refused.stderr

    queries = load_beir_queries(scifact_dir)
    train = load_qrels(scifact_dir / "qrels" / "train.tsv")
    rows = []
    for qid in sorted(train)[:2]:
        gold = sorted(train[qid])[0]
        cands = [
            {"passage_id": f"{gold}#0", "text": "gold", "is_distractor": False,
             "distractor_type": ""},
            {"passage_id": f"ssli:t{qid}:1", "text": f"A study related to: {queries[qid]}",
             "is_distractor": True, "distractor_type": "misleading"},
        ]  # fmt: skip
        rows.append(
            {"id": f"t{qid}/ssli", "question": f"What is known about: {queries[qid]}",
             "answer": "-", "gold_passage_ids": [f"{gold}#0"], "setting": "ssli",
             "candidates": cands}
        )  # fmt: skip
    own = tmp_path / "train-ssli.jsonl"
    own.write_text("".join(json.dumps(r) + "\n" for r in rows))
    done = _run([*args, "--set", f"data.ssli_negatives=[{own}]"], env)
    assert done.returncode == 0, done.stderr
    card = json.loads((tmp_path / "m" / "sciera-card.json").read_text())
    sources = card["data"]["ssli_negatives"]
    assert sources[0]["questions"] == 2 and sources[1]["left_out_dev_gold_abstract"] <= 2
    assert sources[0]["distractors"] == 2
