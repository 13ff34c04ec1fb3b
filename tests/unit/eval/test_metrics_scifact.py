"""SciFact's verification metrics: hand-computed values, errors, and a differential test
against an independent implementation of the published definitions (written below by
enumerating (claim, abstract, sentence) tuples) over seeded random predictions for the
real 809 training claims."""

from __future__ import annotations

import json
import random
from collections.abc import Iterable, Mapping
from pathlib import Path
from typing import Any

import pytest
from scifact_worked_example import GOLD_52, PRED_52

from sciera.datasets.claims import (
    NEI,
    ClaimPrediction,
    parse_gold,
    parse_prediction,
    read_gold,
    read_predictions,
)
from sciera.errors import InputError
from sciera.eval.metrics import (
    METRICS,
    evaluate,
    evaluate_verification,
    parse_metric,
    scifact_metrics,
)
from sciera.eval.metrics.scifact import (
    LEVELS,
    Counts,
    claim_precision,
    claim_refused,
    correct_sentences,
    is_rationalized,
    off_evidence_share,
    scifact_counts,
)


def test_worked_example_of_the_scifact_repository():
    m = scifact_metrics([GOLD_52], [PRED_52])
    # abstracts: predicted 11, 16; gold 11, 15; 11 correct (label and [11] in the first 3)
    for level in ("abstract_label_only", "abstract_rationalized"):
        assert m[f"{level}_precision"] == pytest.approx(1 / 2)
        assert m[f"{level}_recall"] == pytest.approx(1 / 2)
        assert m[f"{level}_f1"] == pytest.approx(1 / 2)
    # sentences: predicted 3 + 2 = 5, gold 2 + 1 + 1 = 4; only sentence 11 is correct
    # (1 lacks its partner 0; 13 is in no set; 18, 20 are in no gold abstract)
    for level in ("sentence_selection", "sentence_label"):
        assert m[f"{level}_precision"] == pytest.approx(1 / 5)
        assert m[f"{level}_recall"] == pytest.approx(1 / 4)
        assert m[f"{level}_f1"] == pytest.approx(2 / 9)  # 2 * 1/5 * 1/4 / (9/20)


def test_counts_of_the_worked_example():
    assert scifact_counts([GOLD_52], [PRED_52]) == Counts(
        abstract_gold=2,
        abstract_predicted=2,
        abstract_label_only=1,
        abstract_rationalized=1,
        sentence_gold=4,
        sentence_predicted=5,
        sentence_selection=1,
        sentence_label=1,
    )


def test_wrong_label_keeps_selection_but_not_label_credit():
    pred = {"id": 52, "evidence": {"11": {"sentences": [0, 1, 11], "label": "CONTRADICT"}}}
    m = scifact_metrics([GOLD_52], [pred])
    assert m["abstract_label_only_f1"] == 0.0
    assert m["abstract_rationalized_f1"] == 0.0
    # selection: 3 of 3 predicted correct, 3 of 4 gold found -> P 1, R 3/4, F1 6/7
    assert m["sentence_selection_precision"] == 1.0
    assert m["sentence_selection_recall"] == pytest.approx(3 / 4)
    assert m["sentence_selection_f1"] == pytest.approx(6 / 7)
    assert m["sentence_label_f1"] == 0.0


def test_nei_prediction_counts_as_no_prediction():
    with_nei = {
        "id": 52,
        "evidence": {
            "11": {"sentences": [11], "label": "SUPPORT"},
            "15": {"sentences": [4], "label": "NOT_ENOUGH_INFO"},
            "99": {"sentences": [0, 1, 2], "label": "NEI"},
        },
    }
    without = {"id": 52, "evidence": {"11": {"sentences": [11], "label": "SUPPORT"}}}
    assert scifact_metrics([GOLD_52], [with_nei]) == scifact_metrics([GOLD_52], [without])
    # one abstract predicted, correct: P 1, R 1/2; one sentence, correct: P 1, R 1/4
    m = scifact_metrics([GOLD_52], [with_nei])
    assert m["abstract_label_only_precision"] == 1.0
    assert m["abstract_label_only_recall"] == pytest.approx(1 / 2)
    assert m["sentence_label_precision"] == 1.0
    assert m["sentence_label_recall"] == pytest.approx(1 / 4)


def test_rationalized_reads_only_the_first_three_sentences_sentence_level_reads_all():
    pred = {"id": 52, "evidence": {"15": {"sentences": [7, 8, 9, 4], "label": "SUPPORT"}}}
    m = scifact_metrics([GOLD_52], [pred])
    assert m["abstract_label_only_precision"] == 1.0  # right abstract, right label
    assert m["abstract_rationalized_precision"] == 0.0  # [4] is the 4th sentence
    # 4 predicted sentences, sentence 4 correct: P 1/4, R 1/4
    assert m["sentence_selection_precision"] == pytest.approx(1 / 4)
    assert m["sentence_selection_recall"] == pytest.approx(1 / 4)
    early = {"id": 52, "evidence": {"15": {"sentences": [4, 7, 8, 9], "label": "SUPPORT"}}}
    assert scifact_metrics([GOLD_52], [early])["abstract_rationalized_precision"] == 1.0


def test_a_partly_predicted_rationale_set_earns_nothing():
    gold = parse_gold(GOLD_52).evidence["11"]
    assert correct_sentences(gold, [1]) == set()
    assert correct_sentences(gold, [1, 0]) == {0, 1}
    assert correct_sentences(gold, [0, 11, 5]) == {11}
    assert not is_rationalized(gold, [1, 13, 14])
    assert is_rationalized(gold, [5, 1, 0])
    assert not is_rationalized(gold, [5, 6, 1, 0])


def test_a_rationale_set_of_four_never_rationalizes_alone():
    gold = {"id": 1, "evidence": {"7": [{"sentences": [0, 1, 2, 3], "label": "SUPPORT"}]}}
    pred = {"id": 1, "evidence": {"7": {"sentences": [0, 1, 2, 3], "label": "SUPPORT"}}}
    m = scifact_metrics([gold], [pred])
    assert m["abstract_label_only_f1"] == 1.0
    assert m["abstract_rationalized_f1"] == 0.0
    assert m["sentence_label_f1"] == 1.0


def test_claims_without_prediction_and_nei_gold_claims():
    nei_claim = {"id": 3, "claim": "c", "evidence": {}, "cited_doc_ids": [40]}
    # claim 52 is predicted as above; claim 3 (cited abstract 40, no evidence) gets SUPPORT
    pred_3 = {"id": 3, "evidence": {"40": {"sentences": [0], "label": "SUPPORT"}}}
    m = scifact_metrics([GOLD_52, nei_claim], [PRED_52, pred_3])
    # abstracts: predicted 3 (11, 16, 40), correct 1, gold 2
    assert m["abstract_label_only_precision"] == pytest.approx(1 / 3)
    assert m["abstract_label_only_recall"] == pytest.approx(1 / 2)
    assert m["abstract_label_only_f1"] == pytest.approx(0.4)
    # sentences: predicted 6, correct 1, gold 4
    assert m["sentence_label_precision"] == pytest.approx(1 / 6)
    # no prediction at all for claim 52: every score 0, gold still counted
    counts = scifact_counts([GOLD_52, nei_claim], [pred_3])
    assert (counts.abstract_gold, counts.abstract_predicted, counts.sentence_gold) == (2, 1, 4)
    assert scifact_metrics([GOLD_52], []) == {k: 0.0 for k in m}


def test_ids_compare_as_strings_and_labels_case_insensitively():
    pred = {"id": "52", "evidence": {11: {"sentences": [11], "label": "support"}}}
    assert scifact_metrics([GOLD_52], [pred])["abstract_rationalized_precision"] == 1.0


def test_registry_and_evaluator():
    for level in LEVELS:
        for stat in ("precision", "recall", "f1"):
            assert METRICS[f"{level}_{stat}"].kind == "verification"
    assert parse_metric("Sentence_Label_F1").definition.kind == "verification"
    got = evaluate_verification(
        [GOLD_52], [PRED_52], ["abstract_label_only_f1", "sentence_label_f1"]
    )
    assert got == pytest.approx({"abstract_label_only_f1": 0.5, "sentence_label_f1": 2 / 9})
    assert METRICS["sentence_label_f1"].compute([GOLD_52], [PRED_52]) == pytest.approx(2 / 9)
    with pytest.raises(ValueError, match="use evaluate_verification"):
        evaluate({"q": ["d"]}, {"q": {"d": 1}}, ["sentence_label_f1"])
    with pytest.raises(ValueError, match="is a query metric"):
        evaluate_verification([GOLD_52], [PRED_52], ["ndcg@10"])


def test_prediction_round_trips_through_json():
    pred = parse_prediction(PRED_52)
    assert isinstance(pred, ClaimPrediction)
    again = parse_prediction(json.loads(json.dumps(pred.to_json())))
    assert again == pred
    assert pred.to_json()["id"] == 52


def test_gold_claim_label():
    assert parse_gold(GOLD_52).label == "SUPPORT"
    assert parse_gold({"id": 1, "evidence": {}}).label == NEI
    mixed = {
        "id": 2,
        "evidence": {
            "1": [{"sentences": [0], "label": "SUPPORT"}],
            "2": [{"sentences": [0], "label": "CONTRADICT"}],
        },
    }
    assert parse_gold(mixed).label == "CONFLICTING"
    assert parse_prediction({"id": 1, "evidence": {"2": {"label": "nei"}}}).to_json() == {
        "id": 1,
        "evidence": {"2": {"label": "NOT ENOUGH INFO", "sentences": []}},
    }


@pytest.mark.parametrize(
    ("record", "field"),
    [
        ({"id": 1, "evidence": {"5": {"label": "REFUTES", "sentences": [0]}}}, "evidence.5.label"),
        ({"id": 1, "evidence": {"5": {"label": "SUPPORT", "sentences": [0, 0]}}}, "sentences"),
        ({"id": 1, "evidence": {"5": {"label": "SUPPORT", "sentences": [-1]}}}, "sentences"),
        ({"id": 1, "evidence": {"5": {"label": "SUPPORT", "sentences": "0"}}}, "sentences"),
        ({"id": 1, "evidence": {"5": ["SUPPORT"]}}, "evidence.5"),
        ({"id": None, "evidence": {}}, "id"),
        ({"id": 1, "evidence": []}, "evidence"),
    ],
)
def test_bad_prediction_names_claim_and_field(record: dict, field: str):
    with pytest.raises(InputError, match=field) as err:
        parse_prediction(record, "preds.jsonl")
    assert "preds.jsonl" in str(err.value)
    assert "\n" not in str(err.value)


@pytest.mark.parametrize(
    ("evidence", "field"),
    [
        ({"5": [{"sentences": [0], "label": "NOT_ENOUGH_INFO"}]}, r"evidence\.5\[0\]\.label"),
        (
            {
                "5": [
                    {"sentences": [0], "label": "SUPPORT"},
                    {"sentences": [1], "label": "CONTRADICT"},
                ]
            },
            r"evidence\.5\.label",
        ),
        (
            {
                "5": [
                    {"sentences": [0, 1], "label": "SUPPORT"},
                    {"sentences": [1], "label": "SUPPORT"},
                ]
            },
            "two rationale sets",
        ),
        ({"5": [{"sentences": [], "label": "SUPPORT"}]}, "empty rationale set"),
        ({"5": []}, r"evidence\.5"),
    ],
)
def test_bad_gold_names_claim_and_field(evidence: dict, field: str):
    with pytest.raises(InputError, match=field) as err:
        parse_gold({"id": 7, "claim": "x", "evidence": evidence}, "claims.jsonl")
    assert str(err.value).startswith("claims.jsonl:claim 7:")


def test_read_files_name_the_line(tmp_path: Path):
    gold = tmp_path / "claims.jsonl"
    gold.write_text(json.dumps(GOLD_52) + "\n\n" + json.dumps({**GOLD_52, "id": 53}) + "\n")
    assert [c.id for c in read_gold(gold)] == ["52", "53"]
    preds = tmp_path / "preds.jsonl"
    preds.write_text(json.dumps(PRED_52) + "\n{not json\n")
    with pytest.raises(InputError, match=r"preds\.jsonl:2: record: not valid JSON"):
        read_predictions(preds)
    preds.write_text(json.dumps(PRED_52) + "\n" + json.dumps(PRED_52) + "\n")
    with pytest.raises(InputError, match="more than once"):
        read_predictions(preds)
    bad = tmp_path / "bad.jsonl"
    bad.write_text(json.dumps({"id": 9, "evidence": {"3": {"label": "X", "sentences": []}}}) + "\n")
    with pytest.raises(InputError, match=r"bad\.jsonl:1: evidence\.3\.label"):
        read_predictions(bad)


def test_off_evidence_is_the_share_of_decisions_on_abstracts_that_are_not_evidence():
    # the worked example decides 11 (evidence) and 16 (not): one of two off the evidence
    assert off_evidence_share([GOLD_52], [PRED_52]) == pytest.approx(1 / 2)
    nei_claim = {"id": 7, "cited_doc_ids": [3], "evidence": {}}  # its cited 3 is no evidence
    decided = {"id": 7, "evidence": {"3": {"sentences": [0], "label": "SUPPORT"}}}
    undecided = {"id": 7, "evidence": {"3": {"sentences": [0], "label": "NOT ENOUGH INFO"}}}
    assert off_evidence_share([GOLD_52, nei_claim], [PRED_52, decided]) == pytest.approx(2 / 3)
    assert off_evidence_share([nei_claim], [undecided]) == 0.0  # nothing decided
    # a wrong direction on evidence is not off the evidence (label-only precision counts it)
    wrong = {"id": 52, "evidence": {"11": {"sentences": [11], "label": "CONTRADICT"}}}
    assert off_evidence_share([GOLD_52], [wrong]) == 0.0
    assert METRICS["abstract_off_evidence"].lower_better
    with pytest.raises(ValueError, match="not in the gold claims: 99"):
        off_evidence_share([GOLD_52], [{"id": 99, "evidence": {}}])


def test_claim_level_refusals_and_precision_read_the_overall_verdict():
    nei_claim = {"id": 7, "cited_doc_ids": [3], "evidence": {}}
    contra = {"id": 8, "evidence": {"4": [{"sentences": [0], "label": "CONTRADICT"}]}}
    gold = [GOLD_52, nei_claim, contra]  # answerable: 52 (SUPPORT) and 8 (CONTRADICT)
    preds = [
        {**PRED_52, "label": "SUPPORT"},  # right
        {"id": 7, "evidence": {}, "label": "SUPPORT"},  # decided, wrong (gold NEI)
        {"id": 8, "evidence": {}, "label": "NOT ENOUGH INFO"},  # refused
    ]
    assert claim_refused(gold, preds) == pytest.approx(1 / 2)
    assert claim_precision(gold, preds) == pytest.approx(1 / 2)
    preds[2]["label"] = "CONFLICTING"  # a decision, never the gold label
    assert claim_refused(gold, preds) == 0.0
    assert claim_precision(gold, preds) == pytest.approx(1 / 3)
    assert claim_refused([nei_claim], [preds[1]]) == 0.0  # no answerable claim
    assert METRICS["claim_refused"].lower_better and not METRICS["claim_precision"].lower_better
    with pytest.raises(ValueError, match="claim 52: the prediction has no overall label"):
        claim_refused([GOLD_52], [PRED_52])
    with pytest.raises(ValueError, match="not in the gold claims: 99"):
        claim_precision([GOLD_52], [{"id": 99, "evidence": {}, "label": "SUPPORT"}])


def test_predictions_for_unknown_claims_are_an_error():
    with pytest.raises(ValueError, match="not in the gold claims: 99"):
        scifact_metrics([GOLD_52], [PRED_52, {"id": 99, "evidence": {}}])
    with pytest.raises(ValueError, match="no claim"):
        scifact_metrics([], [])


# --- differential test ---------------------------------------------------------------------
# An independent reading of SPEC "Verification": flatten gold and predictions into tuples
# and count with set algebra, claim by claim never looked at as a unit.


def _reference(gold: list[Mapping[str, Any]], preds: list[Mapping[str, Any]]) -> dict[str, float]:
    gold_abs = set()  # (claim, doc, label)
    member = {}  # (claim, doc, sentence) -> the gold rationale set holding it
    for g in gold:
        for doc, sets in g["evidence"].items():
            for s in sets:
                gold_abs.add((str(g["id"]), str(doc), s["label"]))
                for x in s["sentences"]:
                    member[(str(g["id"]), str(doc), x)] = frozenset(s["sentences"])
    gold_docs = {(c, d) for c, d, _ in gold_abs}
    pred_abs = []  # (claim, doc, label, first three)
    pred_sents = []  # (claim, doc, sentence, label)
    for p in preds:
        for doc, e in p["evidence"].items():
            label = e["label"].upper()
            if label not in ("SUPPORT", "CONTRADICT"):
                continue
            pred_abs.append((str(p["id"]), str(doc), label, frozenset(e["sentences"][:3])))
            pred_sents += [(str(p["id"]), str(doc), s, label) for s in e["sentences"]]
    chosen = {(c, d, s) for c, d, s, _ in pred_sents}
    label_ok = [(c, d, lab) in gold_abs for c, d, lab, _ in pred_abs]
    # a whole set among the first three: some sentence of the first three whose set fits
    rationalized = [
        ok and any(member.get((c, d, x), {-1}) <= first for x in first)
        for ok, (c, d, _, first) in zip(label_ok, pred_abs, strict=True)
    ]
    sel = [
        (c, d, s) in member and all((c, d, x) in chosen for x in member[(c, d, s)])
        for c, d, s, _ in pred_sents
    ]
    lab = [
        ok and (c, d, label) in gold_abs
        for ok, (c, d, _, label) in zip(sel, pred_sents, strict=True)
    ]
    n_gold_sents = len(member)

    def prf(correct: int, predicted: int, relevant: int) -> tuple[float, float, float]:
        p = correct / predicted if predicted else 0.0
        r = correct / relevant if relevant else 0.0
        return p, r, (2 * p * r / (p + r) if p + r else 0.0)

    rows = {
        "abstract_label_only": prf(sum(label_ok), len(pred_abs), len(gold_docs)),
        "abstract_rationalized": prf(sum(rationalized), len(pred_abs), len(gold_docs)),
        "sentence_selection": prf(sum(sel), len(pred_sents), n_gold_sents),
        "sentence_label": prf(sum(lab), len(pred_sents), n_gold_sents),
    }
    return {
        f"{level}_{stat}": value
        for level, values in rows.items()
        for stat, value in zip(("precision", "recall", "f1"), values, strict=True)
    }


def _random_predictions(gold: list[dict[str, Any]], rng: random.Random) -> list[dict[str, Any]]:
    """Predictions mixing gold abstracts, cited NEI abstracts and other claims' abstracts;
    whole, partial and shuffled rationale sets, stray sentences; all three labels."""
    p_gold, p_nei, p_whole = rng.random(), rng.random() * 0.5, rng.random()
    pool = [str(d) for g in gold for d in g["cited_doc_ids"]]
    out = []
    for g in gold:
        if rng.random() < 0.1:
            continue  # no prediction for this claim
        docs = {str(d) for d in g["cited_doc_ids"] if rng.random() < p_gold}
        docs |= {rng.choice(pool) for _ in range(rng.randrange(3))}
        evidence = {}
        for doc in docs:
            sents: set[int] = set()
            for s in g["evidence"].get(doc, []):
                if rng.random() < p_whole:
                    sents |= set(s["sentences"])
                elif rng.random() < 0.5:
                    sents.add(rng.choice(s["sentences"]))
            sents |= {rng.randrange(15) for _ in range(rng.randrange(4))}
            order = sorted(sents)
            rng.shuffle(order)
            if rng.random() < p_nei:
                label = rng.choice(["NOT_ENOUGH_INFO", "NEI"])
            else:
                gold_sets = g["evidence"].get(doc)
                right = (
                    gold_sets[0]["label"] if gold_sets else rng.choice(["SUPPORT", "CONTRADICT"])
                )
                wrong = "CONTRADICT" if right == "SUPPORT" else "SUPPORT"
                label = right if rng.random() < 0.7 else wrong
            evidence[doc if rng.random() < 0.5 else int(doc)] = {"label": label, "sentences": order}
        out.append({"id": g["id"], "evidence": evidence})
    rng.shuffle(out)
    return out


def _load(path: Path) -> list[dict[str, Any]]:
    return [json.loads(line) for line in path.read_text(encoding="utf-8").splitlines()]


def _close(a: Mapping[str, float], b: Mapping[str, float]) -> Iterable[str]:
    return [k for k in a if abs(a[k] - b[k]) > 1e-12]


def test_differential_against_an_independent_implementation(scifact_dir: Path):
    gold = _load(scifact_dir / "claims_train.jsonl")
    assert len(gold) == 809
    parsed = [parse_gold(g) for g in gold]
    rng = random.Random(54)
    seen_nonzero = set()
    for _ in range(60):
        preds = _random_predictions(gold, rng)
        ours = scifact_metrics(parsed, preds)
        ref = _reference(gold, preds)
        assert set(ours) == set(ref)
        assert not _close(ours, ref), {k: (ours[k], ref[k]) for k in _close(ours, ref)}
        seen_nonzero |= {k for k, v in ours.items() if 0 < v < 1}
    assert seen_nonzero == set(ref)  # every number was exercised away from 0 and 1


def test_gold_as_prediction_scores_one_except_long_rationales(scifact_dir: Path):
    gold = read_gold(scifact_dir / "claims_train.jsonl")
    preds = [
        {
            "id": g.id,
            "evidence": {
                d: {"label": a.label, "sentences": sorted(set().union(*a.rationales))}
                for d, a in g.evidence.items()
            },
        }
        for g in gold
    ]
    m = scifact_metrics(gold, preds)
    assert {k: v for k, v in m.items() if not k.startswith("abstract_rationalized")} == {
        k: 1.0 for k in m if not k.startswith("abstract_rationalized")
    }
    # abstracts whose sorted rationale sentences put no whole set among the first 3
    assert 0.99 < m["abstract_rationalized_f1"] < 1.0
