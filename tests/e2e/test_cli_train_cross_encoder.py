"""`sciera train cross-encoder RECIPE.yaml` end to end on real SciFact data with a tiny model
built from scratch (randomly initialised two-layer BERT over MiniLM's vocabulary), so the
training path stays working: mining, the split guard, the loop, dev selection, calibration,
the card, the model loading by path in the reranker and in `sciera eval retrieval
--reranker`. Then a
kill -9 in the middle of an epoch and a rerun that resumes from the last epoch checkpoint.
The tiny model learns little; what is asserted is the contract, not quality (quality is
measured by benchmarks/experiments/scifact_ce_shipped.yaml on the shipped model).
"""

from __future__ import annotations

import gzip
import json
import os
import signal
import subprocess
import time

import pytest
from train_cli import N_QUERIES, SCIFACT, SHIPPED_SSLI, run_sciera, train_args

from sciera.artifacts.files import CALIBRATION_QUESTIONS_FILE

pytestmark = pytest.mark.e2e


def _train(small, tiny_base, out, *extra: str) -> subprocess.CompletedProcess[str]:
    args = train_args("cross-encoder", small["corpus"], tiny_base, out, "train.negatives=3")
    return subprocess.run(
        [*args, "--set", f"data.exclude_ssli=[{SHIPPED_SSLI}]", *extra],
        capture_output=True,
        text=True,
        timeout=900,
    )


def test_train_tiny_cross_encoder_end_to_end(small_scifact, tiny_base, scifact_dir, fresh_home):
    out = small_scifact["root"] / "models" / "tiny-ce"
    done = _train(small_scifact, tiny_base, out, "--set", "train.epochs=2")
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
    # the whole retrieve-then-rerank pipeline from the CLI in one line (100 train claims)
    header, *rows = (scifact_dir / "qrels" / "train.tsv").read_text().splitlines()
    first = list(dict.fromkeys(r.split("\t")[0] for r in rows))[:100]
    qrels = small_scifact["root"] / "qrels-100.tsv"
    qrels.write_text("\n".join([header, *(r for r in rows if r.split("\t")[0] in first)]) + "\n")
    ev = run_sciera(
        "eval",
        "retrieval",
        "--corpus",
        str(small_scifact["corpus"]),
        "--queries",
        str(scifact_dir),
        "--qrels",
        str(qrels),
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
    assert result["retriever"] == "bm25>cross_encoder@10" and result["queries"] == 100
    # an existing model folder is not overwritten by accident
    again = _train(small_scifact, tiny_base, out)
    assert again.returncode == 2 and "--overwrite" in again.stderr
    # its own home (the int8 export is checked there), the LLM weights linked in
    home = fresh_home(small_scifact["root"] / "home", onnx_exports=False)
    _recalibrate_in_place(out, home, card)


def _recalibrate_in_place(out, home, card) -> None:
    """`sciera train recalibrate` rebuilds the dev split from the card, refits both
    calibrators (fused with the listwise feature) and records how; a card whose dev split
    cannot be reproduced leaves the calibrators untouched."""
    env = {**os.environ, "SCIERA_HOME": str(home)}
    fused = json.loads((out / "sciera-calibrator-fused.json").read_text())
    assert fused["features"] == ["ce", "first_stage_norm", "reciprocal_rank", "ce_softmax"]
    done = run_sciera("train", "recalibrate", str(out), env=env)
    assert done.returncode == 0, done.stderr
    assert "dev fused" in done.stdout and "ECE" in done.stdout
    after = json.loads((out / "sciera-card.json").read_text())
    assert after["data"]["dev_qids"] == card["data"]["dev_qids"]
    assert after["recalibrated"]["fused_features"][-1] == "ce_softmax"
    assert after["recalibrated"]["first_stage"].startswith("bm25 top-10")
    assert "Calibrators refitted" in (out / "README.md").read_text()
    fused_fp32 = (out / "sciera-calibrator-fused.json").read_bytes()
    int8 = run_sciera("train", "recalibrate", str(out), "--precision", "int8", env=env)
    assert int8.returncode == 0, int8.stderr
    assert "dev fused" in int8.stdout
    assert f"sciera: exporting {out} to int8 ONNX at {home / 'cache' / 'onnx'}" in int8.stderr
    after = json.loads((out / "sciera-card.json").read_text())
    assert set(after["dev"]["modes_int8"]) == set(after["dev"]["modes"])
    assert all((out / f).is_file() for f in after["calibrators_int8"].values())
    assert (out / "sciera-calibrator-fused.json").read_bytes() == fused_fp32
    assert list((home / "cache" / "onnx").glob("*/model_int8.onnx"))
    assert "Int8 calibrators" in (out / "README.md").read_text()
    _calibration_questions(out, home, env, after)
    _calibration_ssli(out, home, {**env, "SCIERA_LLM__MODEL": "qwen2.5-coder-0.5b-instruct-q4_k_m"})
    after = json.loads((out / "sciera-card.json").read_text())
    broken = {**after, "data": {**after["data"], "dev_qids": ["no-such-query"]}}
    (out / "sciera-card.json").write_text(json.dumps(broken))
    before = (out / "sciera-calibrator-fused.json").read_bytes()
    log = home / "work" / f"recalibrate-{out.name}" / "calibration_questions.jsonl"
    asked = log.read_bytes()
    refused = run_sciera("train", "recalibrate", str(out), env=env)
    assert refused.returncode == 2 and "dev split rebuilt from the card differs" in refused.stderr
    assert (out / "sciera-calibrator-fused.json").read_bytes() == before
    assert log.read_bytes() == asked  # refused before the card's calibration questions


def _calibration_questions(out, home, env, card) -> None:
    """`--calibration-questions 2` with the embedded 0.5B: two held-out abstracts (dev
    claims' gold first; never a training claim's gold, never a test claim's) get a question;
    the card records them, the dev split and its metrics' queries stay the same, and a rerun
    asks the LLM nothing."""
    from sciera.corpus import load_qrels

    env = {**env, "SCIERA_LLM__MODEL": "qwen2.5-coder-0.5b-instruct-q4_k_m"}
    args = ("train", "recalibrate", str(out), "--calibration-questions", "2")
    done = run_sciera(*args, env=env)
    assert done.returncode == 0, done.stderr
    after = json.loads((out / "sciera-card.json").read_text())
    asked = after["data"]["calibration_questions"]
    assert asked["passages"] == 2 and asked["style"] == "question"
    assert asked["llm"].startswith("llamacpp:qwen2.5-coder-0.5b")
    assert after["config"]["calibration_questions"] == 2
    assert after["data"]["dev_qids"] == card["data"]["dev_qids"]
    assert after["dev"]["modes"]["ce"]["queries"] == card["dev"]["modes"]["ce"]["queries"]
    log = home / "work" / f"recalibrate-{out.name}" / "calibration_questions.jsonl"
    lines = log.read_text().splitlines()
    qrels = load_qrels(card["data"]["qrels"])
    dev = set(card["data"]["dev_qids"])
    dev_gold = {d for q in dev for d in qrels[q]}
    train_gold = {d for q in qrels if q not in dev for d in qrels[q]}
    docs = {json.loads(x)["doc_id"] for x in lines}
    test_qrels = load_qrels(SCIFACT / "qrels" / "test.tsv")
    test_gold = {d for q in test_qrels for d in test_qrels[q]}
    assert len(docs) == 2 and not docs & train_gold and not docs & test_gold
    assert asked["from_dev_gold"] == len(docs & dev_gold)
    if asked["kept"]:
        assert "questions fused" in done.stdout
        assert "calibration questions" in (out / "README.md").read_text()
    # a yes/no question for the same two abstracts too: two more log lines, none redone
    # (which also shows a rerun asks nothing again of what its log holds)
    mixed = run_sciera(*args, "--calibration-styles", "question,yesno", env=env)
    assert mixed.returncode == 0, mixed.stderr
    after = json.loads((out / "sciera-card.json").read_text())
    assert after["config"]["calibration_styles"] == ["question", "yesno"]
    assert after["data"]["calibration_questions"]["style"] == "question+yesno"
    assert after["data"]["calibration_questions"]["passages"] == 2
    more = log.read_text().splitlines()
    assert more[: len(lines)] == lines and len(more) == len(lines) + 2
    assert {json.loads(x)["doc_id"] for x in more[len(lines) :]} == docs
    # the folder carries the log, so a copy recalibrates elsewhere without the LLM
    assert (
        gzip.decompress((out / CALIBRATION_QUESTIONS_FILE).read_bytes()).decode().splitlines()
        == more
    )
    bad = run_sciera(*args, "--calibration-styles", "statement", env=env)
    assert bad.returncode == 2 and "calibration styles" in bad.stderr
    assert log.read_text().splitlines() == more


def test_killed_training_resumes_from_its_last_epoch(small_scifact, tiny_base):
    out = small_scifact["root"] / "models" / "tiny-resume"
    work = out.with_name(out.name + ".work")
    args = train_args(
        "cross-encoder",
        small_scifact["corpus"],
        tiny_base,
        out,
        "train.negatives=3",
        "train.epochs=3",
        "train.groups_per_batch=1",
    )
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


def test_spliced_negatives_are_made_and_counted(small_scifact, tiny_base):
    """`--spliced-negatives 2` cuts negatives from the real gold abstracts of the training
    claims (most SciFact abstracts have enough sentences) and the card counts them."""
    out = small_scifact["root"] / "models" / "tiny-ce-spliced"
    done = _train(
        small_scifact,
        tiny_base,
        out,
        "--set",
        "train.epochs=1",
        "--set",
        "data.spliced_negatives=2",
    )
    assert done.returncode == 0, done.stderr
    card = json.loads((out / "sciera-card.json").read_text())
    sp = card["data"]["spliced_negatives"]
    assert sp["per_query"] == 2 and sp["queries"] >= card["data"]["train_queries"] // 2
    assert sp["background"] == sp["queries"] and 0 < sp["spliced"] <= sp["queries"]
    assert sp["queries"] + sp["skipped_short_gold"] == card["data"]["train_queries"]
    assert "spliced negatives" in (out / "README.md").read_text()


def _ssli_line(qid: str, question: str, gold: str, distractor: str | None) -> str:
    cands = [{"passage_id": f"{gold}#0", "text": "", "is_distractor": False, "distractor_type": ""}]
    if distractor:
        cands.append(
            {
                "passage_id": f"ssli:{qid}:0",
                "text": distractor,
                "is_distractor": True,
                "distractor_type": "background",
            }
        )
    rec = {"id": f"{qid}/ssli", "question": question, "answer": "", "setting": "ssli"}
    return json.dumps({**rec, "gold_passage_ids": [f"{gold}#0"], "candidates": cands})


def _calibration_ssli(out, home, env) -> None:
    """`--calibration-ssli SET`: the set's distractor goes into a copy of the corpus, the
    question whose gold abstract is held out joins the fused weights' fit, the one whose
    gold is a dev claim's is refused; the card records it and weight 0 drops it again."""
    from sciera.corpus import PassageStore, load_qrels
    from sciera.datasets.ssli.io import ssli_gold_docs

    card = json.loads((out / "sciera-card.json").read_text())
    corpus = card["data"]["corpus"]
    qrels = {**load_qrels(SCIFACT / "qrels/train.tsv"), **load_qrels(SCIFACT / "qrels/test.tsv")}
    log = home / "work" / f"recalibrate-{out.name}" / "calibration_questions.jsonl"
    taken = {d for q in qrels.values() for d in q} | ssli_gold_docs(SHIPPED_SSLI)
    taken |= {json.loads(x)["doc_id"] for x in log.read_text().splitlines()}
    with PassageStore.open(corpus) as store:
        held = next(p for p in store.iter_passages() if p.doc_id not in taken)
    dev_gold = sorted(qrels[card["data"]["dev_qids"][0]])[0]
    title = held.title or held.text[:80]
    lines = [
        _ssli_line("held", f"What did the study on {title} report?", held.doc_id, title),
        _ssli_line("seen", "What did the dev claim's abstract find?", dev_gold, "An aside."),
    ]
    sset = out.parent / "cal-ssli.jsonl"
    sset.write_text("\n".join(lines) + "\n")
    fused = out / "sciera-calibrator-fused.json"
    before = json.loads(fused.read_text())
    missing = run_sciera("train", "recalibrate", str(out), "--calibration-ssli", "nope", env=env)
    assert missing.returncode == 2 and "nope: no such SSLI set" in missing.stderr
    assert json.loads(fused.read_text()) == before
    done = run_sciera("train", "recalibrate", str(out), "--calibration-ssli", str(sset), env=env)
    assert done.returncode == 0, done.stderr
    assert "SSLI questions fused" in done.stdout and "distractor first" in done.stdout
    after = json.loads((out / "sciera-card.json").read_text())
    assert after["config"]["calibration_ssli"] == {"sets": [str(sset)], "weight": 10}
    info = after["data"]["calibration_ssli"]
    assert info["used"] == 1 and info["refused_seen_gold"] == ["seen"]
    assert info["distractors"] == 2 and after["recalibrated"]["calibration_ssli"]["weight"] == 10
    copy = PassageStore.open(info["corpus"])
    with copy:
        assert copy.find_passages(["ssli_held_0#0"])  # the distractor is a document there
    assert json.loads(fused.read_text())["notes"]["fitted_on"].endswith("1 SSLI questions x10")
    assert "calibration SSLI questions" in (out / "README.md").read_text()
    # a plain rerun reuses the card's set (nothing mined again); weight 0 drops it
    again = run_sciera("train", "recalibrate", str(out), env=env)
    assert again.returncode == 0, again.stderr
    assert json.loads((out / "sciera-card.json").read_text())["data"]["calibration_ssli"] == info
    args = ("train", "recalibrate", str(out), "--calibration-ssli-weight", "0")
    dropped = run_sciera(*args, env=env)
    assert dropped.returncode == 0, dropped.stderr
    last = json.loads((out / "sciera-card.json").read_text())
    assert "calibration_ssli" not in last["config"] and "calibration_ssli" not in last["dev"]
    assert json.loads(fused.read_text())["coef"] == before["coef"]
