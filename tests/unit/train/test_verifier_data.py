"""The verifier's training data: split discipline, dev split, examples (tiny fixtures; the
zero-shot scorer replaced by a word-overlap stand-in, no model)."""

from __future__ import annotations

import gzip
import json
import random
from pathlib import Path

import pytest

from sciera.train.splits import SplitViolation
from sciera.train.verifier_data import (
    NEI,
    SUPPORT,
    SentenceExample,
    VerifierDataSpec,
    folds,
    load_abstracts,
    load_pubmedqa_items,
    make_guard,
    prepare_verifier,
    ssli_distractors,
)
from sciera.train.verifier_fit import class_weights, sample_sentences

ABSTRACTS = {
    "10": (
        "Aspirin trial",
        ["Background.", "Aspirin lowered cancer risk.", "Methods.", "Aspirin is cheap."],
    ),
    "11": ("Statins", ["Statins raised LDL.", "Statins and muscle pain.", "Done."]),
    "12": ("Other", ["Nothing about it.", "Aspirin was not studied."]),
    "13": ("SSLI gold", ["A sentence.", "Another."]),
}


class OverlapScorer:
    """Stand-in for the zero-shot cross-encoder: shared words with the claim."""

    def __init__(self, *args, **kwargs) -> None:
        pass

    def score(self, jobs):
        out = {}
        for key, claim, sentences in jobs:
            words = set(claim.lower().split())
            out[key] = [float(len(words & set(s.lower().rstrip(".").split()))) for s in sentences]
        return out


def _write(tmp_path: Path, claims: list[dict]) -> VerifierDataSpec:
    data = tmp_path / "scifact"
    (data / "qrels").mkdir(parents=True)
    with (data / "claims_train.jsonl").open("w") as fh:
        for c in claims:
            fh.write(json.dumps(c) + "\n")
    with (data / "corpus_sentences.jsonl").open("w") as fh:
        for doc, (title, sents) in ABSTRACTS.items():
            fh.write(json.dumps({"doc_id": int(doc), "title": title, "abstract": sents}) + "\n")
    (data / "qrels" / "test.tsv").write_text("query-id\tcorpus-id\tscore\n900\t11\t1\n")
    (data / "queries.jsonl").write_text(
        json.dumps({"_id": "900", "text": "Statins lower LDL."}) + "\n"
    )
    return VerifierDataSpec(
        data / "claims_train.jsonl", data / "corpus_sentences.jsonl", dev_fraction=0.25
    )


def _claims(n: int = 8) -> list[dict]:
    out = []
    for i in range(n):
        if i % 2 == 0:
            ev = {"10": [{"sentences": [1], "label": "SUPPORT" if i % 4 == 0 else "CONTRADICT"}]}
            out.append(
                {
                    "id": i,
                    "claim": f"Aspirin lowers cancer risk {i}.",
                    "evidence": ev,
                    "cited_doc_ids": [10],
                }
            )
        else:
            out.append(
                {
                    "id": i,
                    "claim": f"Statins cause muscle pain {i}.",
                    "evidence": {},
                    "cited_doc_ids": [11],
                }
            )
    return out


@pytest.fixture(autouse=True)
def _no_model(monkeypatch):
    monkeypatch.setattr("sciera.train.verifier_data.ZeroShotScorer", OverlapScorer)


def test_examples_from_gold_and_cited_abstracts(tmp_path):
    spec = _write(tmp_path, _claims())
    data = prepare_verifier(spec, None, tmp_path / "work")
    assert len(data.dev_ids) == 2 and len(data.train_ids) == 6
    assert not set(data.dev_ids) & set(data.train_ids)
    rat = [e for e in data.sentence_examples if e.kind == "rationale"]
    assert rat and all(e.doc_id == "10" and e.index == 1 and e.label == 1 for e in rat)
    assert {e.kind for e in data.sentence_examples} == {"rationale", "evidence_other", "cited"}
    gold = [e for e in data.verdict_examples if e.source == "scifact_gold"]
    assert all(
        e.sentences == ("Aspirin lowered cancer risk.",) and e.title == "Aspirin trial"
        for e in gold
    )
    noisy = [e for e in data.verdict_examples if e.source == "scifact_noisy"]
    # the gold sentence plus the best-scored other one, in abstract order
    assert noisy and noisy[0].sentences == ("Aspirin lowered cancer risk.", "Aspirin is cheap.")
    cited = [e for e in data.verdict_examples if e.source == "scifact_cited"]
    assert cited and all(e.label == NEI and len(e.sentences) == 2 for e in cited)
    assert {e.group for e in data.verdict_examples} <= set(data.train_ids)
    assert data.candidates(data.dev_ids[0]) in (["10"], ["11"])


def test_a_test_claim_in_the_training_file_stops_the_run(tmp_path):
    claims = [*_claims(), {"id": 900, "claim": "x", "evidence": {}, "cited_doc_ids": [11]}]
    with pytest.raises(SplitViolation, match="900"):
        prepare_verifier(_write(tmp_path, claims), None, tmp_path / "work")


def test_claims_worded_like_a_test_claim_or_citing_a_forbidden_abstract_are_left_out(tmp_path):
    claims = [
        *_claims(),
        {"id": 50, "claim": "statins LOWER ldl", "evidence": {}, "cited_doc_ids": [11]},
        {
            "id": 51,
            "claim": "About 13.",
            "evidence": {"13": [{"sentences": [0], "label": "SUPPORT"}]},
            "cited_doc_ids": [13],
        },
    ]
    spec = _write(tmp_path, claims)
    ssli = tmp_path / "eval_ssli.jsonl"
    ssli.write_text(
        json.dumps(
            {
                "id": "q1",
                "question": "q?",
                "gold_passage_ids": ["13#0"],
                "setting": "ssli",
                "candidates": [],
            }
        )
        + "\n"
    )
    from dataclasses import replace

    data = prepare_verifier(replace(spec, exclude_ssli=(ssli,)), None, tmp_path / "work")
    assert data.skipped["text_of_an_evaluation_claim"] == 1
    assert data.skipped["cites_a_forbidden_abstract"] == 1
    assert "50" not in data.claims and "51" not in data.claims
    assert all(e.doc_id != "13" for e in data.sentence_examples)


def test_dev_split_is_drawn_over_every_claim_of_the_file(tmp_path):
    """Leaving a claim out never reshuffles the dev split (it stays the cross-encoder's)."""
    more = _write(
        tmp_path / "b",
        [
            *_claims(12),
            {"id": 50, "claim": "statins lower LDL", "evidence": {}, "cited_doc_ids": [11]},
        ],
    )
    b = prepare_verifier(more, None, tmp_path / "wb")
    assert "50" not in b.claims
    from sciera.train.splits import dev_split

    assert b.dev_ids == [
        c for c in dev_split([str(i) for i in [*range(12), 50]], 0.25, 0)[1] if c != "50"
    ]


def test_cv_fold_holds_out_training_claims(tmp_path):
    from dataclasses import replace

    spec = replace(_write(tmp_path, _claims(20)), cv_fold=1, cv_folds=3)
    data = prepare_verifier(spec, None, tmp_path / "work")
    assert data.test_ids and not set(data.test_ids) & (set(data.train_ids) | set(data.dev_ids))
    assert {e.group for e in data.verdict_examples}.isdisjoint(data.test_ids)


def test_ssli_distractors_are_nei_and_an_evaluation_set_is_refused(tmp_path):
    spec = _write(tmp_path, _claims())
    train_set = tmp_path / "train_set"
    train_set.mkdir()
    rec = {
        "id": "12-p0-q1/ssli",
        "question": "What did the aspirin trial find?",
        "gold_passage_ids": ["12#0"],
        "setting": "ssli",
        "candidates": [
            {"passage_id": "12#0", "is_distractor": False, "distractor_type": ""},
            {
                "passage_id": "ssli:x:1",
                "text": "A misleading text.",
                "is_distractor": True,
                "distractor_type": "misleading",
            },
        ],
    }
    with gzip.open(train_set / "instances.packed.jsonl.gz", "wt") as fh:
        fh.write(json.dumps(rec) + "\n")
    examples, sources = ssli_distractors([train_set], make_guard(spec))
    assert [(e.sentences, e.label, e.group) for e in examples] == [
        (("A misleading text.",), NEI, "ssli:12-p0-q1")
    ]
    assert sources[0]["distractors"] == 1
    from dataclasses import replace

    guard = make_guard(replace(spec, exclude_ssli=(train_set / "instances.packed.jsonl.gz",)))
    with pytest.raises(SplitViolation, match="12"):
        ssli_distractors([train_set], guard)


def test_pubmedqa_items_and_folds(tmp_path):
    path = tmp_path / "pq.json"
    path.write_text(
        json.dumps(
            {
                "2": {
                    "QUESTION": "Does it work?",
                    "CONTEXTS": ["It worked. In mice."],
                    "LONG_ANSWER": "Yes.",
                    "final_decision": "yes",
                },
                "1": {
                    "QUESTION": "Is it safe?",
                    "CONTEXTS": ["Unclear."],
                    "LONG_ANSWER": "",
                    "final_decision": "maybe",
                },
            }
        )
    )
    items = load_pubmedqa_items(path)
    assert [(q.id, q.sentences, q.label) for q in items] == [
        ("1", ("Unclear.",), NEI),
        ("2", ("It worked.", "In mice."), SUPPORT),
    ]
    f = folds([str(i) for i in range(10)], 3, seed=0)
    assert sorted(x for fold in f for x in fold) == sorted(str(i) for i in range(10))
    assert [len(x) for x in f] == [4, 3, 3]
    assert folds([str(i) for i in range(10)], 3, seed=0) == f


def test_load_abstracts_names_the_bad_record(tmp_path):
    path = tmp_path / "s.jsonl"
    path.write_text(
        '{"doc_id": 1, "title": "t", "abstract": ["a"]}\n{"doc_id": 2, "abstract": "oops"}\n'
    )
    from sciera.errors import InputError

    with pytest.raises(InputError, match="abstract"):
        load_abstracts(path)


def test_sampling_keeps_positives_and_the_hardest_negatives():
    ex = [
        SentenceExample("c", "d", i, int(i == 0), "k", float(h))
        for i, h in enumerate([0, 5, 4, 1, 2])
    ]
    picked = sample_sentences(ex, hard=2, rand=1, rng=random.Random(0))
    idx = [e.index for e in picked]
    assert idx[:3] == [0, 1, 2] and len(idx) == 4 and idx[3] in (3, 4)
    assert class_weights([0, 0, 0, 1, 2, 2]) == pytest.approx([2 / 3, 2.0, 1.0])


def test_claim_negations_swap_support_and_contradict_and_keep_nei(tmp_path):
    from dataclasses import replace

    spec = _write(tmp_path, _claims())
    plain = prepare_verifier(spec, None, tmp_path / "work").verdict_examples
    both = prepare_verifier(replace(spec, claim_negations=True), None, tmp_path / "w2")
    negated = [e for e in both.verdict_examples if e.source.endswith("_negated")]
    assert both.verdict_examples[: len(plain)] == plain
    originals = {(e.group, e.source): e for e in plain}
    # one per gold abstract and per NEI abstract; the extra rationale variants are not negated
    assert {e.source for e in negated} == {"scifact_gold_negated", "scifact_cited_negated"}
    for e in negated:
        src = originals[(e.group, e.source.removesuffix("_negated"))]
        assert e.sentences == src.sentences and e.claim != src.claim
        assert e.label == {SUPPORT: 1, 1: SUPPORT, NEI: NEI}[src.label]
    for e in negated:
        start = "Aspirin raises cancer risk" if "gold" in e.source else "Statins do not cause"
        assert e.claim.startswith(start)
