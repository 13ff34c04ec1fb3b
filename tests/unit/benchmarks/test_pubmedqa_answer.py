"""The PubMedQA benchmark's bookkeeping: extractor names, resuming, pairing."""

from __future__ import annotations

import argparse
import json

import pytest

SCRIPT = "pubmedqa_answer"


@pytest.mark.parametrize(
    "name", ["full", "vanilla", "rational", "deepera", "deepera@0.5", "deepera@1"]
)
def test_extractor_names_accepted(bench, name):
    assert bench.extractor_name(name) == name


@pytest.mark.parametrize("name", ["rational@0.5", "deepera@1.5", "deepera@x", "bm25", "deepera@"])
def test_bad_extractor_names_rejected(bench, name):
    with pytest.raises(argparse.ArgumentTypeError):
        bench.extractor_name(name)


def _row(setting, extractor, pmid, key="k", pred="yes"):
    return {
        "setting": setting,
        "extractor": extractor,
        "pmid": pmid,
        "gold": "yes",
        "pred": pred,
        "sufficient": True,
        "cr": 2.0 if pred != "refused" else 300.0,
        "evidence_ids": [] if pred == "refused" else [f"{pmid}#0"],
        "seconds": 1.0,
        "own_in_evidence": True,
        "own_in_candidates": True,
        "config": key,
    }


def test_load_done_keeps_this_configuration_and_skips_a_cut_line(bench, tmp_path):
    path = tmp_path / "rows.jsonl"
    rows = [_row("reasoning", "full", "1"), _row("reasoning", "full", "2", key="other")]
    path.write_text(
        "\n".join(json.dumps(r) for r in rows) + '\n{"setting": "reas', encoding="utf-8"
    )
    done = bench.load_done(path, "k")
    assert list(done) == [("reasoning", "full", "1")]


def test_paired_results_cover_only_questions_every_extractor_answered(bench):
    done = {
        ("reasoning", "full", "1"): _row("reasoning", "full", "1"),
        ("reasoning", "deepera@0.5", "1"): _row("reasoning", "deepera@0.5", "1", pred="no"),
        ("reasoning", "full", "2"): _row("reasoning", "full", "2"),
    }
    results, paired = bench.paired_results(done, ["1", "2"], ["reasoning"], ["full", "deepera@0.5"])
    assert paired == {"reasoning": 1}
    assert results["reasoning"]["full"]["accuracy"] == 1.0
    assert results["reasoning"]["deepera@0.5"]["accuracy"] == 0.0


def test_config_key_ignores_the_extractor_list_but_not_tau(bench):
    base = {
        "depth": 5,
        "top_k": 3,
        "tau": 0.8,
        "first_stage": "bm25",
        "refuse": "empty",
        "passage_words": 200,
        "ideal": False,
    }
    a = bench.config_key(argparse.Namespace(**base, extractors=["full"]), "m")
    b = bench.config_key(argparse.Namespace(**base, extractors=["full", "deepera@0.5"]), "m")
    c = bench.config_key(argparse.Namespace(**{**base, "tau": 0.5}), "m")
    assert a == b != c
    assert bench.config_key(argparse.Namespace(**base), "m", "scifact-minilm") == a
    assert bench.config_key(argparse.Namespace(**base), "m", "ce-other") != a


def test_mean_cr_leaves_out_refusals(bench):
    rows = [_row("reasoning", "deepera", "1"), _row("reasoning", "deepera", "2", pred="refused")]
    m = bench.summarize(rows, "reasoning")
    assert m["mean_cr"] == 2.0 and m["with_evidence"] == 1 and m["refusal_rate"] == 0.5
    assert bench.summarize(rows[1:], "reasoning")["mean_cr"] is None


def test_each_extractor_is_tested_against_the_first_on_the_same_questions(bench):
    preds = {"full": ["yes"] * 6, "rational": ["no"] * 5 + ["yes"]}
    done = {
        ("reasoning", name, str(i)): _row("reasoning", name, str(i), pred=p)
        for name, ps in preds.items()
        for i, p in enumerate(ps)
    }
    for i in range(6):  # ideal answers where both have one
        done[("reasoning", "full", str(i))].update(ideal="an answer", ideal_f1=0.5)
        done[("reasoning", "rational", str(i))].update(
            ideal="an answer", ideal_f1=0.5 + 0.1 * (i > 2)
        )
    results, _ = bench.paired_results(done, [str(i) for i in range(6)], ["reasoning"], list(preds))
    assert "vs_full" not in results["reasoning"]["full"]
    vs = results["reasoning"]["rational"]["vs_full"]
    assert vs["accuracy"]["a_only"] == 5 and vs["accuracy"]["b_only"] == 0
    assert vs["accuracy"]["p_value"] == 0.0625  # 2 * (1/2)**5
    assert vs["ideal_token_f1"]["mean_diff"] == 0.05 and vs["ideal_token_f1"]["p_value"] == 0.25


def test_always_yes_counts_gold_and_tests_each_extractor_against_it(bench):
    done = {}
    for i, gold in enumerate(["yes", "yes", "no", "maybe"]):
        for name, pred in (("full", "yes"), ("rational", gold)):  # rational always right
            row = _row("reasoning", name, str(i), pred=pred)
            row["gold"] = gold
            done[("reasoning", name, str(i))] = row
    out = bench.always_yes(done, ["0", "1", "2", "3", "4"], ["reasoning"], ["full", "rational"])
    t = out["reasoning"]
    assert t["n"] == 4 and t["gold"] == {"yes": 2, "no": 1, "maybe": 1}
    assert t["accuracy"] == 0.5 and t["macro_f1"] == pytest.approx((2 / 3) / 3)
    vs = t["extractors_vs_always_yes"]
    assert vs["full"]["b_only"] == vs["full"]["a_only"] == 0
    assert (vs["rational"]["b_only"], vs["rational"]["a_only"]) == (2, 0)
    assert vs["rational"]["p_value"] == 0.5


def test_by_sufficiency_splits_accuracy_and_ideal_f1_by_the_extractors_judgment(bench):
    rows = [
        _row("reasoning", "rational", str(i), pred=p) for i, p in enumerate(["yes", "no", "no"])
    ]
    rows[1]["sufficient"] = rows[2]["sufficient"] = False
    for r, f1 in zip(rows, (0.5, 0.2, 0.4), strict=True):
        r["ideal"], r["ideal_f1"] = "two words", f1
    m = bench.summarize([*rows, {**rows[0], "sufficient": None}], "reasoning")
    assert m["by_sufficiency"]["sufficient"] == {"n": 1, "accuracy": 1.0, "ideal_token_f1": 0.5}
    insufficient = m["by_sufficiency"]["insufficient"]
    assert insufficient["n"] == 2 and insufficient["accuracy"] == 0.0
    assert insufficient["ideal_token_f1"] == pytest.approx(0.3)
    assert m["ideal_mean_words"] == 2.0


def test_no_sufficiency_split_when_the_extractor_judges_nothing(bench):
    rows = [{**_row("reasoning", "full", "1"), "sufficient": None}]
    assert "by_sufficiency" not in bench.summarize(rows, "reasoning")
