"""The verifier run's pure parts: the claim-level refusal table, the choice of ``strong``
and the card rendering (hand-made inputs, no model)."""

from __future__ import annotations

from pathlib import Path

import pytest
import typer
from click.testing import CliRunner

from sciera.cli import app, train_verifier_cmds  # noqa: F401  (registers the commands)
from sciera.datasets.claims import parse_gold
from sciera.train.splits import SplitGuard
from sciera.train.verifier_card import render
from sciera.train.verifier_data import VerifierData, VerifierDataSpec
from sciera.train.verifier_job import VerifierJob
from sciera.train.verifier_policy import choose_strong, claim_table
from sciera.types import CONTRADICT, NOT_ENOUGH_INFO, SUPPORT, AbstractVerdict, Verification


def _data(claims):
    gold = {str(c["id"]): parse_gold(c) for c in claims}
    return VerifierData({}, gold, [], list(gold), [], {}, [], [], [], [], SplitGuard())


def _verification(label: str, conf: float) -> Verification:
    probs = {SUPPORT: (conf, 0.0, 1 - conf), CONTRADICT: (0.0, conf, 1 - conf)}[label]
    v = AbstractVerdict("d", "", label, conf, probs)
    return Verification("c", (v,), label, conf)


def test_claim_table_counts_refusals_and_decision_precision():
    data = _data(
        [
            {"id": 1, "claim": "a", "evidence": {"d": [{"sentences": [0], "label": "SUPPORT"}]}},
            {"id": 2, "claim": "b", "evidence": {"d": [{"sentences": [0], "label": "CONTRADICT"}]}},
            {"id": 3, "claim": "c", "evidence": {}},
        ]
    )
    results = {
        "1": _verification(SUPPORT, 0.9),
        "2": _verification(SUPPORT, 0.6),  # wrong
        "3": _verification(CONTRADICT, 0.4),  # a decision on an NEI claim: wrong
    }
    rows = {r["strong"]: r for r in claim_table(data, ["1", "2", "3"], results)}
    assert rows[0.3] == {
        "strong": 0.3,
        "refusal_rate": 0.0,
        "precision": 1 / 3,
        "decided": 3,
        "answerable": 2,
    }
    assert rows[0.5]["decided"] == 2 and rows[0.5]["precision"] == 0.5
    assert rows[0.7] == {
        "strong": 0.7,
        "refusal_rate": 0.5,
        "precision": 1.0,
        "decided": 1,
        "answerable": 2,
    }
    # the fewest refusals at precision >= 0.70
    assert choose_strong(list(rows.values())) == 0.65
    assert NOT_ENOUGH_INFO not in {r["strong"] for r in rows.values()}


def test_choose_strong_falls_back_to_the_most_precise():
    rows = [
        {"strong": 0.3, "refusal_rate": 0.0, "precision": 0.5, "decided": 4},
        {"strong": 0.6, "refusal_rate": 0.2, "precision": 0.6, "decided": 3},
    ]
    assert choose_strong(rows) == 0.6


def test_card_renders_every_section():
    m = {
        f"{lvl}_{s}": 0.5
        for lvl in (
            "abstract_label_only",
            "abstract_rationalized",
            "sentence_selection",
            "sentence_label",
        )
        for s in ("precision", "recall", "f1")
    }
    card = {
        "name": "v",
        "kind": "claim verifier",
        "base": "scifact-minilm",
        "command": "sciera train verifier --out v",
        "config": {"seed": 0},
        "data": {
            "claims": "c.jsonl",
            "sentences": "s.jsonl",
            "train_claims": 10,
            "dev_claims": 3,
            "test_claims": 0,
            "negatives_from": "hybrid",
            "sentence_examples": {},
            "verdict_examples": {},
            "pubmedqa_train": 4,
            "pubmedqa_held_out": 1,
            "skipped": {},
        },
        "splits": {"excluded": []},
        "epochs": [
            {
                "epoch": 1,
                "steps": 5,
                "mean_loss": 0.7,
                "seconds": 60,
                "dev": {"scifact_mean_f1": 0.4},
            }
        ],
        "select_metric": "scifact_mean_f1",
        "best_epoch": 1,
        "train_seconds": 60,
        "policy": {"min_rationale": 0.5, "strong": 0.6, "min_cited": 0.25},
        "dev": {
            "cite_trials": [
                dict(m, min_cited=None),
                dict(m, min_cited=0.25, sentence_label_f1=0.625),
            ],
            "rationale_calibration": {
                "sentences": 9,
                "rationales": 2,
                "ece_sigmoid": 0.1,
                "ece": 0.05,
            },
            "verdict_calibration": {"inputs": 4, "labels": {}, "ece_softmax": 0.2, "ece": 0.1},
            "open_k": 5,
            "claims": 3,
            "oracle": m,
            "open": m,
            "oracle_rationale": {"accuracy": 0.7, "macro_f1": 0.6, "ece": 0.1, "n": 2},
            "open_claims": {
                "strong": 0.6,
                "refusal_rate": 0.1,
                "answerable": 2,
                "decided": 2,
                "precision": 0.8,
            },
        },
        "pubmedqa_held_out": {"reasoning": {"n": 1, "accuracy": 1.0, "macro_f1": 1.0}},
        "versions": {},
        "recalibrated": {"date": "2026-11-29", "weights_from": "w", "command": "sciera re"},
        "combiner": {
            "llm": "tiny-llm",
            "prompts": "2+1",
            "fitted_on": "training claims",
            "per_label": 3,
            "prior": "natural",
            "files": {"claim": "sciera-combiner-claim.json"},
            "claim": {
                "rows": {"SUPPORT": 3},
                "natural": {"SUPPORT": 9},
                "folds": 5,
                "inputs": ["trained", "llm", "llm_negated"],
                "cross_validated": {
                    m: {"accuracy": 0.5, "macro_f1": 0.25}
                    for m in ("combined", "trained", "llm", "llm_negated")
                },
                "input_search": {
                    "trained+llm": {"accuracy": 0.4, "macro_f1": 0.2},
                    "trained+llm+llm_negated": {"accuracy": 0.5, "macro_f1": 0.25},
                },
            },
        },
    }
    card["dev"]["open_candidates"] = "the reranked top abstracts"
    card["citer"] = {
        "base": "scifact-minilm",
        "adapters": "sciera-citer.safetensors",
        "calibrator": "sciera-citer-calibrator.json",
        "context": "none",
        "rank": 16,
        "training": {
            "trainable_parameters": 812353,
            "epochs": [
                {"epoch": 1, "dev": {"average_precision": 0.5, "best_right": 0.5}},
                {"epoch": 2, "dev": {"average_precision": 0.625, "best_right": 0.75}},
            ],
            "best_epoch": 2,
            "train_seconds": 600,
        },
    }
    card["dev"]["citer_calibration"] = {
        "sentences": 9,
        "rationales": 2,
        "ece_sigmoid": 0.2,
        "ece": 0.05,
        "average_precision_head": 0.4,
        "average_precision_citer": 0.6,
    }
    card["combiner"]["policy"] = {
        "relevance_weight": 0.4,
        "min_relevance": 0.55,
        "strong": 0.4,
        "min_cited": 0.2,
        "min_quoted": 0.3,
    }
    card["dev"]["quote_trials"] = [
        dict(m, min_quoted=None),
        dict(m, min_quoted=0.4, sentence_label_f1=0.7),
    ]
    card["policy"]["min_quoted"] = 0.4
    card["combiner"]["policy_search"] = {
        "chosen_on": "3 dev claims, open setting (top 5)",
        "trials": [dict(m, relevance_weight=0.4, min_relevance=0.55)],
        "cite_trials": [dict(m, min_cited=None), dict(m, min_cited=0.2, sentence_label_f1=0.75)],
        "quote_trials": [dict(m, min_quoted=None), dict(m, min_quoted=0.3, sentence_label_f1=0.8)],
        "card_gate": m,
        "cross_validated": dict(m, folds=5, picked=[]),
    }
    text = render(card)
    for part in (
        "sciera train verifier --out v",
        "| oracle (cited abstracts given) | 0.500 / 0.500 / **0.500**",
        "| open (the top abstracts ask reads) |",
        "- open setting: top 5 of the reranked top abstracts",
        "Recalibrated 2026-11-29 (w)",
        "## LLM combiners (the `combined` verdict)",
        '| claims (`sciera-combiner-claim.json`) | {"SUPPORT": 3} of {"SUPPORT": 9} | trained, '
        "llm, llm_negated | 0.500 / 0.250 | 0.500 / 0.250 | 0.500 / 0.250 | 0.500 / 0.250 |",
        "(more inputs only for a higher one): claims: trained+llm 0.200, "
        "trained+llm+llm_negated 0.250.",
        "intercepts are then corrected from the rows' label mix",
        "Best epoch: 1",
        "- cited sentences: the citer `sciera-citer.safetensors`, the relevance cross-encoder "
        "`scifact-minilm` with rank-16 low-rank adapters (812,353 parameters) trained on the "
        "rationale labels alone (2 epochs, 10.0 min; epoch 2 kept by dev average precision over "
        "the evidence abstracts' sentences, 0.6250; best sentence a rationale in 75.0% of them)",
        "their average precision 0.4000 (the rationale head) -> 0.6000 (the citer)",
        "chosen on dev after everything else (the `trained` verdict's: 0.4; dev open sentence "
        "selection+label F1 0.500 quoting as without it, 0.700 chosen; the `combined` verdict's"
        ": 0.3; dev open sentence selection+label F1 0.500 quoting as without it, 0.800 chosen)",
        "| chosen gate, `min_cited` and the citer's `min_quoted` (what is quoted), on the claims"
        " they were chosen on | 0.500 / 0.500 / **0.500** | 0.500 / 0.500 / **0.800** |",
        "| reasoning setting (own contexts) | 1 | 1.000 | 1.000 |",
        "strong 0.6",
        "- cited sentences (`min_cited`, chosen after the policy from read, 0.25): 0.25; dev open"
        " sentence selection+label F1 0.500 citing the sentences read, 0.625 chosen",
        "### The combined verdict's gate (chosen on the dev claims)",
        '"relevance_weight": 0.4, "min_relevance": 0.55',
        "| chosen, 5-fold cross-validated over the dev claims (chosen on the other folds)"
        " | 0.500 / 0.500 / **0.500** |",
        "| chosen gate and `min_cited`, on the claims they were chosen on | 0.500 / 0.500 / "
        "**0.500** | 0.500 / 0.500 / **0.750** |",
    ):
        assert part in text
    card["policy"]["min_quoted"] = None  # the dev claims chose to quote as without the citer
    assert (
        "(the `trained` verdict's: none, quoted as without the citer (dev open sentence "
        "selection+label F1 0.500); the `combined` verdict's: 0.3;" in render(card)
    )
    # an ensemble names every member's file and recipe
    card["citer"]["adapters"] = ["sciera-citer.safetensors", "sciera-citer-2.safetensors"]
    card["citer"]["training"]["members"] = [
        {
            "config": {"hard_negatives": 4, "random_negatives": 2, "seed": 1},
            "epochs": [{"epoch": 1, "dev": {"average_precision": 0.7}}],
            "best_epoch": 1,
            "train_seconds": 900,
        }
    ]
    assert (
        "- cited sentences: the citer `sciera-citer.safetensors`, `sciera-citer-2.safetensors`, "
        "the relevance cross-encoder" in render(card)
    )
    assert (
        "75.0% of them); member 2 the same with 4 hard and 2 random negatives per abstract, "
        "seed 1 (1 epochs, 15.0 min; epoch 1 kept, dev average precision 0.7000); its logit "
        "the mean of the 2 members'; sentence context: none;" in render(card)
    )


class _Selector:
    name = "first"

    def score_many(self, claim, abstracts):
        return [[0.9] + [0.1] * (len(a.sentences) - 1) for a in abstracts]


class _Verdict:
    """SUPPORT with P(NEI) 0.1 for a sentence saying "yes", else P(NEI) 0.9."""

    name = "cue"

    def predict_many(self, claim, inputs):
        return [(0.85, 0.05, 0.1) if "yes" in s.sentences[0] else (0.05, 0.05, 0.9) for s in inputs]


def _evidence_claims(n: int = 10):
    """``n`` dev claims, each supported by sentence 0 of its own abstract ``g<i>``."""
    from sciera.verify.base import AbstractText

    claims = []
    for i in range(n):
        ev = {f"g{i}": [{"sentences": [0], "label": "SUPPORT"}]}
        claims.append({"id": i, "claim": f"claim {i}", "evidence": ev})
    data = _data(claims)
    for i in range(n):
        data.abstracts[f"g{i}"] = AbstractText(f"g{i}", "", ("yes it does.", "other."))
    return data


def test_the_combined_gate_is_chosen_on_dev_and_cross_validated():
    from sciera.train.verifier_policy import choose_combined_policy
    from sciera.verify.base import AbstractText
    from sciera.verify.verifier import VerifyPolicy

    data = _evidence_claims()
    for i in range(10):
        # a distractor the reranker finds as relevant as the evidence: only the verdict's
        # NOT ENOUGH INFO can keep it out
        data.abstracts[f"x{i}"] = AbstractText(f"x{i}", "", ("no idea.", "other."))
        data.reranked[str(i)] = [(f"g{i}", 0.8), (f"x{i}", 0.8)]
    base = VerifyPolicy(min_rationale=0.5, fallback=2, min_relevance=0.5)
    seen: list[tuple[str, int, int]] = []
    policy, report = choose_combined_policy(
        _Selector(), _Verdict(), data, base, open_k=5, progress=lambda *a: seen.append(a)
    )
    # every policy tried reports its dev claims one by one (an LLM verdict's calls take minutes)
    n = len(data.dev_ids)
    assert seen[:n] == [("combined gate: dev claims verified", k, n) for k in range(1, n + 1)]
    assert policy.relevance_weight < 1.0 and policy.min_rationale == 0.5
    # with P(relevant) alone both abstracts pass the gate: precision 0.5
    assert report["card_gate"]["abstract_label_only_precision"] == 0.5
    assert report["trials"][0]["abstract_label_only_f1"] == 1.0
    assert report["cross_validated"]["abstract_label_only_f1"] == 1.0
    assert len(report["cross_validated"]["picked"]) == 5
    assert report["strong_table"] and 0.3 <= policy.strong <= 0.95
    # citing the second sentence too (min_cited 0.1) would halve sentence precision
    assert policy.min_cited != 0.1 and len(report["cite_trials"]) == 7


class _LowSelector:
    """The rationale scores a weak selector gives: the evidence best, but below 0.5."""

    name = "low"

    def score_many(self, claim, abstracts):
        return [[0.3] + [0.05] * (len(a.sentences) - 1) for a in abstracts]


class _AnyYes(_Verdict):
    def __init__(self):
        self.asked = []

    def predict_many(self, claim, inputs):
        self.asked += inputs
        return [
            (0.85, 0.05, 0.1) if "yes" in " ".join(s.sentences) else (0.05, 0.05, 0.9)
            for s in inputs
        ]


def test_the_cited_sentences_are_chosen_on_dev_with_the_gate():
    from sciera.train.verifier_policy import choose_combined_policy
    from sciera.verify.verifier import VerifyPolicy

    data = _evidence_claims()
    for i in range(10):
        data.reranked[str(i)] = [(f"g{i}", 0.9)]
    # nothing passes min_rationale: the verdict reads the best two, and citing both halves
    # sentence precision; citing what passes min_cited (else the best one) does not
    base = VerifyPolicy(min_rationale=0.5, fallback=2, min_relevance=0.5)
    verdict = _AnyYes()
    policy, report = choose_combined_policy(_LowSelector(), verdict, data, base, open_k=5)
    assert policy.min_cited is not None and policy.min_cited <= 0.3
    by = {t["min_cited"]: t for t in report["cite_trials"]}
    assert by[None]["sentence_selection_precision"] == 0.5
    assert by[policy.min_cited]["sentence_selection_precision"] == 1.0
    assert report["cross_validated"]["sentence_label_f1"] == 1.0
    assert all(p["cited"] is not None for p in report["cross_validated"]["picked"])
    assert {len(v.sentences) for v in verdict.asked} == {2}  # the context is still read


def _cli_refuses(tmp_path: Path, message: str, *sets: str) -> None:
    """``sciera train verifier RECIPE --set ...`` (a recipe of existing files, out tmp/m)
    exits 2 with ``message`` and writes nothing."""
    for name in ("c.jsonl", "s.jsonl"):
        (tmp_path / name).write_text("")
    recipe = tmp_path / "r.yaml"
    recipe.write_text("out: ./m\ndata: {claims: c.jsonl, sentences: s.jsonl}\n")
    args = [a for s in sets for a in ("--set", s)]
    out = CliRunner().invoke(typer.main.get_group(app), ["train", "verifier", str(recipe), *args])
    assert out.exit_code != 0
    assert message in " ".join(str(out.exception or out.output).replace("│", " ").split())
    assert not (tmp_path / "m").exists()


def test_negated_claim_without_the_combiners_is_refused(tmp_path: Path) -> None:
    spec = VerifierDataSpec(claims=tmp_path / "c.jsonl", sentences=tmp_path / "s.jsonl")
    with pytest.raises(ValueError, match="add --combine-llm"):
        VerifierJob(spec, "m", negated_claim=True)
    VerifierJob(spec, "m", combine_llm=True, negated_claim=True)
    # a recipe's negated claim sits in its combiner section: none without one
    _cli_refuses(tmp_path, "negated_claim: Extra inputs are not permitted", "negated_claim=true")


def test_combiner_size_without_the_combiners_is_refused(tmp_path: Path) -> None:
    spec = VerifierDataSpec(claims=tmp_path / "c.jsonl", sentences=tmp_path / "s.jsonl")
    with pytest.raises(ValueError, match="add --combine-llm"):
        VerifierJob(spec, "m", combiner_per_label=50)
    with pytest.raises(ValueError, match="at least 10"):
        VerifierJob(spec, "m", combine_llm=True, combiner_per_label=5)
    assert VerifierJob(spec, "m", combine_llm=True, combiner_per_label=50).per_label == 50
    assert VerifierJob(spec, "m", combine_llm=True).per_label == 100
    _cli_refuses(
        tmp_path,
        "r.yaml: combiner.per_label: Input should be greater than or equal to 10",
        "combiner.per_label=5",
    )


class _QuotingSelector(_LowSelector):
    """Reads as the weak selector (sentence 1 best: the wrong one); its citer knows sentence
    0 is the rationale."""

    def score_many(self, claim, abstracts):
        return [[0.05, 0.3] + [0.05] * (len(a.sentences) - 2) for a in abstracts]

    def cite_many(self, claim, abstracts):
        return [[0.9] + [0.02] * (len(a.sentences) - 1) for a in abstracts]


def test_the_quoted_sentences_are_chosen_last_and_leave_the_verdicts_alone():
    from sciera.train.verifier_policy import choose_combined_policy
    from sciera.verify.verifier import VerifyPolicy

    data = _evidence_claims()
    for i in range(10):
        data.reranked[str(i)] = [(f"g{i}", 0.9)]
    base = VerifyPolicy(min_rationale=0.5, fallback=2, min_relevance=0.5)
    plain, quoting = _AnyYes(), _AnyYes()
    off, off_report = choose_combined_policy(_QuotingSelector(), plain, data, base, open_k=5)
    on, report = choose_combined_policy(
        _QuotingSelector(), quoting, data, base, open_k=5, quote=True
    )
    assert off.min_quoted is None and "quote_trials" not in off_report
    # the verdict read the same inputs either way; quoting the citer's best is chosen
    assert {v.sentences for v in quoting.asked} == {v.sentences for v in plain.asked}
    assert on.min_quoted is not None
    by = {t["min_quoted"]: t for t in report["quote_trials"]}
    assert by[None]["sentence_label_f1"] < by[on.min_quoted]["sentence_label_f1"] == 1.0
    assert by[None]["abstract_label_only_f1"] == by[on.min_quoted]["abstract_label_only_f1"]
    assert all(p["quoted"] is not None for p in report["cross_validated"]["picked"])
    # the trained verdict's own min_quoted leaves the gate search unaffected
    again, _ = choose_combined_policy(_QuotingSelector(), _AnyYes(), data, on, open_k=5, quote=True)
    assert again == on


def test_the_citers_calibrator_is_fitted_on_the_heads_dev_sentences():
    import numpy as np

    from sciera.train.verifier_calibrate import DevSentences, fit_citer_calibrator
    from sciera.verify.base import AbstractText

    rng = np.random.default_rng(0)
    abstracts = [AbstractText(f"d{i}", "", tuple(f"s{j}." for j in range(4))) for i in range(30)]
    labels = [np.array([1, 0, 0, 0]) for _ in abstracts]
    head = [rng.normal(size=4) for _ in abstracts]  # the head ranks at random

    class Citer:  # ranks the rationale first
        def logits(self, claim, items):
            return [np.array([2.0, -1.0, -1.5, -2.0]) + rng.normal(0, 0.1, 4) for _ in items]

    sentences = DevSentences([("c", "claim", abstracts)], [head], [labels])
    cal, stats = fit_citer_calibrator(Citer(), sentences)
    assert stats["sentences"] == 120 and stats["rationales"] == 30
    assert stats["average_precision_citer"] == 1.0 > stats["average_precision_head"]
    assert cal(np.array([2.0]))[0] > 0.5 > cal(np.array([-1.5]))[0]
    # without the head's logits (a citer calibrated apart from a network): no head ranking
    alone, stats = fit_citer_calibrator(Citer(), DevSentences(sentences.claims, [], [labels]))
    assert "average_precision_head" not in stats and stats["average_precision_citer"] == 1.0
    assert alone(np.array([2.0]))[0] > 0.5


def test_rationale_labels_mark_every_gold_rationale_sentence():
    gold = parse_gold(
        {
            "id": 7,
            "claim": "c",
            "evidence": {
                "d": [{"sentences": [0], "label": SUPPORT}, {"sentences": [2, 3], "label": SUPPORT}]
            },
        }
    )
    assert gold.rationale_labels("d", 5) == [1, 0, 1, 1, 0]
    assert gold.rationale_labels("other", 3) == [0, 0, 0]  # not evidence
