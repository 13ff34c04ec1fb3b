"""`sciera train soup` end to end: two tiny cross-encoders trained on real SciFact data from
one start (different negatives), averaged into one model folder the reranker loads; the
dev trials are logged and a rerun measures nothing again; an ingredient with another dev
split is refused in one line."""

from __future__ import annotations

import json
import shutil
import subprocess

import pytest
from train_cli import SHIPPED_SSLI, run_sciera, train_args

pytestmark = pytest.mark.e2e


def _trained(small, tiny_base, name: str, negatives: str):
    out = small["root"] / "models" / f"soup-{name}"
    if not (out / "sciera-card.json").exists():
        args = train_args("cross-encoder", small["corpus"], tiny_base, out, "train.epochs=1")
        done = subprocess.run(
            [
                *args,
                "--set",
                f"train.negatives={negatives}",
                "--set",
                f"data.exclude_ssli=[{SHIPPED_SSLI}]",
            ],
            capture_output=True,
            text=True,
            timeout=900,
        )
        assert done.returncode == 0, done.stderr
    return out


def test_soup_of_two_tiny_models(small_scifact, tiny_base):
    a = _trained(small_scifact, tiny_base, "a", "3")
    b = _trained(small_scifact, tiny_base, "b", "2")
    out = small_scifact["root"] / "models" / "tiny-soup"
    # the first ingredient's logged calibration questions seed the soup's log
    logged = a.with_name(a.name + ".work") / "calibration_questions.jsonl"
    logged.write_text('{"key": "from a"}\n')
    # ... in the first ingredient's calibration styles, which the soup's card records
    a_card = json.loads((a / "sciera-card.json").read_text())
    a_card["config"]["calibration_styles"] = ["question", "yesno"]
    (a / "sciera-card.json").write_text(json.dumps(a_card))
    args = ["train", "soup", str(a), str(b), "--out", str(out), "--calibration-questions", "0"]
    done = run_sciera(*args)
    assert done.returncode == 0, done.stderr
    seeded = out.with_name(out.name + ".work") / "calibration_questions.jsonl"
    assert seeded.read_text() == '{"key": "from a"}\n'
    assert json.loads(done.stdout.strip().splitlines()[-1]) == {"model_dir": str(out)}
    card = json.loads((out / "sciera-card.json").read_text())
    soup = card["soup"]
    from sciera.train.lineage import spec_from_card

    assert spec_from_card(card).calibration_styles == ("question", "yesno")
    # greedy: each alone, then the second best added to the best
    assert [len(t["members"]) for t in soup["trials"]] == [1, 1, 2]
    assert set(soup["chosen"]) <= {str(a), str(b)} and soup["chosen"]
    assert [i["command"] for i in soup["ingredients"]] == [
        json.loads((m / "sciera-card.json").read_text())["command"] for m in (a, b)
    ]
    assert card["splits"] == json.loads((a / "sciera-card.json").read_text())["splits"]
    assert set(card["dev"]["modes"]) == {"first_stage", "ce", "calibrated", "fused"}
    readme = (out / "README.md").read_text()
    assert "## Ingredients" in readme and "## Dev trials" in readme
    # the averaged weights, stored in float16 like the ingredients, load and score
    from sciera.rerank.registry import make_reranker
    from sciera.types import Passage, Ranking, ScoredPassage

    size = (out / "model.safetensors").stat().st_size
    assert abs(size - (a / "model.safetensors").stat().st_size) < 10_000
    rr = make_reranker("cross_encoder", model=str(out))
    items = tuple(
        ScoredPassage(Passage(f"d{i}#0", f"d{i}", 0, "", t), 2.0 - i, i + 1)
        for i, t in enumerate(["vitamin d and bone fractures", "galaxy rotation curves"])
    )
    ranked = rr.rerank("vitamin D fracture risk", Ranking("q", items, "bm25"))
    assert all(0.0 <= s.score <= 1.0 for s in ranked.items)
    # a rerun measures nothing again: the trials come from the log
    trials = out.with_name(out.name + ".work") / "trials.jsonl"
    before = trials.read_text()
    again = run_sciera(*args, "--overwrite")
    assert again.returncode == 0, again.stderr
    assert trials.read_text() == before
    # an ingredient with another dev split is refused, naming it and what differs
    other = small_scifact["root"] / "models" / "soup-other-dev"
    shutil.rmtree(other, ignore_errors=True)
    shutil.copytree(b, other)
    other_card = json.loads((other / "sciera-card.json").read_text())
    other_card["data"]["dev_qids"] = other_card["data"]["dev_qids"][1:]
    (other / "sciera-card.json").write_text(json.dumps(other_card))
    refused = run_sciera("train", "soup", str(a), str(other), "--out", str(out) + "-x")
    assert refused.returncode != 0
    assert f"{other}: cannot go into one soup with {a}: data.dev_qids differ" in refused.stderr
    assert not (out.parent / (out.name + "-x")).exists()
