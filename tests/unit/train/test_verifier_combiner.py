"""The LLM combiners: which training inputs they read (never dev claims or held-out
questions), the resumable row cache, and the fit with its cross-validated report (stand-in
models, no LLM)."""

from __future__ import annotations

import json
from collections.abc import Sequence

import numpy as np
import pytest

from sciera.datasets.claims import parse_gold
from sciera.train.splits import SplitGuard
from sciera.train.verifier_combiner import combiner_rows, fit_combiners
from sciera.train.verifier_data import PubMedQAItem, VerifierData
from sciera.verify.base import AbstractText, VerdictInput
from sciera.verify.verifier import VerifyPolicy

ABSTRACTS = {
    "a": AbstractText("a", "A", ("Aspirin lowered risk.", "Other.")),
    "b": AbstractText("b", "B", ("Aspirin raised risk.", "Other.")),
    "c": AbstractText("c", "C", ("Nothing here.", "Other.")),
}


def _data() -> VerifierData:
    claims = [
        {
            "id": 1,
            "claim": "Aspirin lowers risk.",
            "evidence": {"a": [{"sentences": [0], "label": "SUPPORT"}]},
        },
        {
            "id": 2,
            "claim": "Aspirin lowers risk!",
            "evidence": {"b": [{"sentences": [0], "label": "CONTRADICT"}]},
        },
        {"id": 3, "claim": "Aspirin lowers pain.", "evidence": {}, "cited_doc_ids": ["c"]},
        {
            "id": 4,
            "claim": "A dev claim.",
            "evidence": {"a": [{"sentences": [0], "label": "SUPPORT"}]},
        },
    ]
    gold = {str(c["id"]): parse_gold(c) for c in claims}
    train_q = [
        PubMedQAItem(f"q{i}", f"Does it work {i}?", ("It worked.",), "", i % 3) for i in range(6)
    ]
    held = [PubMedQAItem("held", "Held out?", ("No.",), "", 1)]
    return VerifierData(
        ABSTRACTS, gold, ["1", "2", "3"], ["4"], [], {}, [], [], train_q, held, SplitGuard()
    )


class FirstSentence:
    name = "first"

    def score_many(self, claim: str, abstracts: Sequence[AbstractText]) -> list[list[float]]:
        return [[0.9] + [0.1] * (len(a.sentences) - 1) for a in abstracts]


class Cue:
    """'lowered'/'worked' -> SUPPORT, 'raised' -> CONTRADICT, else NEI; counts calls."""

    name = "cue"

    def __init__(self, sure: float) -> None:
        self.sure, self.calls, self.seen = sure, 0, []

    def predict_many(self, claim: str, inputs: Sequence[VerdictInput]):
        out = []
        for item in inputs:
            self.calls += 1
            self.seen.append(claim)
            text, rest = " ".join(item.sentences), (1 - self.sure) / 2
            k = 0 if ("lowered" in text or "worked" in text) else 1 if "raised" in text else 2
            p = [rest] * 3
            p[k] = self.sure
            out.append(tuple(p))
        return out


def test_rows_read_training_claims_and_questions_only():
    data, llm = _data(), Cue(0.8)
    policy = VerifyPolicy(min_rationale=0.5)
    rows = combiner_rows(data, FirstSentence(), Cue(0.5), llm, policy, per_label=10, negated=True)
    keys = {r.key for r in rows}
    assert keys == {"1/a", "2/b", "3/c", *(f"q{i}" for i in range(6))}
    assert "A dev claim." not in llm.seen and "Held out?" not in llm.seen
    by = {r.key: r for r in rows}
    assert by["2/b"].label == 1 and by["3/c"].label == 2 and by["1/a"].llm[0] == 0.8
    assert by["1/a"].trained[0] == 0.5
    # each claim row also asks the negated claim ("Aspirin raises risk."), read swapped;
    # a question asks nothing more
    assert "Aspirin raises risk." in llm.seen and llm.calls == len(rows) + 3
    assert by["1/a"].llm_negated == pytest.approx((0.1, 0.8, 0.1))
    assert by["q0"].llm_negated == pytest.approx((1 / 3,) * 3)
    # per_label caps each (kind, label), drawn the same way every time
    plain = Cue(0.8)  # without --negated-claim: one LLM call per row, no negated input
    few = combiner_rows(data, FirstSentence(), Cue(0.5), plain, policy, per_label=1)
    assert plain.calls == len(few) and all(r.llm_negated == (1 / 3,) * 3 for r in few)
    again = combiner_rows(data, FirstSentence(), Cue(0.5), Cue(0.8), policy, per_label=1)
    assert len(few) == 6 and [r.key for r in few] == [r.key for r in again]


def _pair(pid: str, label: str, split: str = "train", source: str = "healthver"):
    from sciera.datasets.pairs import LabelledPair

    text = {"SUPPORT": "It lowered risk.", "CONTRADICT": "It raised risk."}.get(label, "Eh.")
    return LabelledPair(pid, f"Claim {pid}.", (text, "Other."), label, source, f"g{pid}", split)


def test_pooled_pairs_join_the_rows_per_collection_and_label():
    from sciera.train.verifier_combiner import natural_counts

    data, llm = _data(), Cue(0.8)
    policy = VerifyPolicy(min_rationale=0.5)
    pooled = [_pair(f"h{i}", ("SUPPORT", "CONTRADICT", "NOT ENOUGH INFO")[i % 3]) for i in range(9)]
    pooled += [_pair(f"c{i}", "CONTRADICT", source="covidfact") for i in range(4)]
    rows = combiner_rows(data, FirstSentence(), Cue(0.5), llm, policy, per_label=2, pooled=pooled)
    keys = {r.key for r in rows}
    # two of each label per collection, read as abstracts without a title (keyed by collection)
    assert sum(k.startswith("healthver:") for k in keys) == 6
    assert sum(k.startswith("covidfact:") for k in keys) == 2
    assert {"1/a", "2/b", "3/c"} <= keys  # the own claims stay
    covid = [r for r in rows if r.key.startswith("covidfact:")]
    assert all(r.llm == pytest.approx((0.1, 0.8, 0.1)) and r.label == 1 for r in covid)
    assert all(r.group.startswith("healthver:g") for r in rows if r.key.startswith("healthver:"))
    # own_claims off: only pooled claim rows (questions stay); the prior stays the own data's
    alone = combiner_rows(
        data, FirstSentence(), Cue(0.5), Cue(0.8), policy, per_label=2, pooled=pooled, own=False
    )
    assert not {"1/a", "2/b", "3/c"} & {r.key for r in alone}
    # the same pooled draw either way (only the own claims are left out)
    assert {r.key for r in alone} == {r.key for r in rows} - {"1/a", "2/b", "3/c"}
    assert {r.key for r in alone if r.kind == "question"} == {
        r.key for r in rows if r.kind == "question"
    }
    assert natural_counts(data)["claim"] == [1, 1, 1]
    # a pair outside train is refused, never read
    with pytest.raises(ValueError, match="h9 is dev"):
        combiner_rows(
            data, FirstSentence(), Cue(0.5), llm, policy, pooled=[_pair("h9", "SUPPORT", "dev")]
        )


def test_fit_trusts_the_informative_model_and_reports_cross_validation(tmp_path):
    from sciera.train.verifier_combiner import CombinerRow

    rows = []
    for i in range(60):
        y = i % 3
        informative = [0.1, 0.1, 0.1]
        informative[y] = 0.8
        noise = [1 / 3] * 3
        rows.append(CombinerRow("claim", f"c{i}", f"c{i}/d", y, tuple(noise), tuple(informative)))
    combiners, report = fit_combiners(rows)
    assert set(combiners) == {"claim"}
    cv = report["claim"]["cross_validated"]
    assert cv["combined"]["accuracy"] == pytest.approx(1.0)
    assert cv["trained"]["accuracy"] < 0.5 and report["claim"]["rows"]["SUPPORT"] == 20
    p = combiners["claim"]([[1 / 3] * 3], [[0.1, 0.8, 0.1]])
    assert p.argmax() == 1
    # the rows were read without the negated claim, so it is no candidate
    assert report["claim"]["inputs"] == ["trained", "llm"] == list(combiners["claim"].inputs)
    assert "input_search" not in report["claim"]
    json.dumps(report)  # the card section is JSON


def _negation_rows(llm_of, negated_of) -> list:
    """90 claim rows (SUPPORT, CONTRADICT, NOT ENOUGH INFO in turn): a noise head, the
    claim's reading ``llm_of(i, label)``, the negated claim's ``negated_of(label)`` for
    SUPPORT and CONTRADICT rows (an unsure one for the others)."""
    from sciera.train.verifier_combiner import CombinerRow

    rng = np.random.default_rng(0)
    rows = []
    for i in range(90):
        y = i % 3
        neg = negated_of(y) if y < 2 else (0.3, 0.3, 0.4)
        noise = tuple(rng.dirichlet([1, 1, 1]))
        rows.append(CombinerRow("claim", f"c{i}", f"c{i}/d", y, noise, llm_of(i, y), neg))
    return rows


def test_the_negated_claim_is_read_when_it_tells_contradiction_apart():
    # the LLM on the claim: SUPPORT for both SUPPORT and CONTRADICT (its lean), NEI right;
    # on the negated claim: it supports the negation when the claim is contradicted
    rows = _negation_rows(
        lambda i, y: (0.8, 0.1, 0.1) if y < 2 else (0.1, 0.1, 0.8),
        lambda y: (0.7, 0.2, 0.1) if y == 0 else (0.2, 0.7, 0.1),
    )
    combiners, report = fit_combiners(rows)
    search = report["claim"]["input_search"]
    assert search["trained+llm+llm_negated"]["macro_f1"] > search["trained+llm"]["macro_f1"]
    assert report["claim"]["inputs"] == ["trained", "llm", "llm_negated"]
    assert report["claim"]["cross_validated"]["combined"]["accuracy"] > 0.9
    p = combiners["claim"]([[1 / 3] * 3], [[0.8, 0.1, 0.1]], [[0.2, 0.7, 0.1]])
    assert p.argmax() == 1


def test_a_negated_reading_that_points_against_the_claims_is_not_read():
    """Rows where the negated claim's reading (turned to the claim's side) tells SUPPORT
    from CONTRADICT backwards: it raises the cross-validated macro-F1, but a combiner
    reading it would decide CONTRADICT where every LLM reading says SUPPORT, so the search
    keeps the claim's reading alone and the report says why."""
    from sciera.train.verifier_combiner import against_the_llm

    # the claim's reading: right, but SUPPORT for half the CONTRADICT rows; NEI right
    rows = _negation_rows(
        lambda i, y: (
            (0.1, 0.1, 0.8) if y == 2 else (0.2, 0.7, 0.1) if y * i % 2 else (0.7, 0.2, 0.1)
        ),
        lambda y: (0.2, 0.7, 0.1) if y == 0 else (0.7, 0.2, 0.1),
    )
    combiners, report = fit_combiners(rows)
    search = report["claim"]["input_search"]
    assert search["trained+llm+llm_negated"]["macro_f1"] > search["trained+llm"]["macro_f1"]
    assert search["trained+llm+llm_negated"]["against_the_llm"] == "SUPPORT at 0.7"
    assert "against_the_llm" not in search["trained+llm"]
    assert report["claim"]["inputs"] == ["trained", "llm"] == list(combiners["claim"].inputs)
    assert against_the_llm(combiners["claim"]) is None
    json.dumps(report)


def test_the_natural_prior_moves_the_intercepts_by_the_log_share_ratio():
    from sciera.train.verifier_combiner import CombinerRow, prior_shift

    # rows capped to 10 per label; the data holds 40 / 10 / 10: a 4x more common SUPPORT
    labels = np.array([0] * 10 + [1] * 10 + [2] * 10)
    shift = prior_shift([40, 10, 10], labels)
    assert shift == pytest.approx((np.log(4 / 6 * 3), np.log(1 / 6 * 3), np.log(1 / 6 * 3)))
    assert prior_shift([0, 0, 0], labels) == (0.0, 0.0, 0.0)
    assert prior_shift([5, 5, 0], labels)[2] == 0.0  # no such input in the data
    # an uninformative input: the balanced fit says 1/3 each, the corrected one 4/6 SUPPORT
    flat = (1 / 3, 1 / 3, 1 / 3)
    rows = [
        CombinerRow("question", f"q{i}", f"q{i}", int(y), flat, flat) for i, y in enumerate(labels)
    ]
    plain, _ = fit_combiners(rows)
    moved, report = fit_combiners(rows, natural={"question": [40, 10, 10]})
    assert plain["question"]([flat], [flat])[0] == pytest.approx([1 / 3] * 3, abs=0.02)
    assert moved["question"]([flat], [flat])[0] == pytest.approx([4 / 6, 1 / 6, 1 / 6], abs=0.02)
    assert report["question"]["natural"] == {"SUPPORT": 40, "CONTRADICT": 10, "NOT ENOUGH INFO": 10}
