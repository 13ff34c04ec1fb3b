"""The verdict metrics (how often the verify stage decides a question's distractors and gold
passages, pooled over passages), their run through an SSLI experiment with stand-in models,
the paired test of `eval report --baseline`, and benchmarks/experiments/verify_ssli.yaml."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
import yaml

from sciera.eval.metrics import (
    evaluate,
    evaluate_verdicts,
    evaluate_verdicts_per_query,
    parse_metric,
)
from sciera.eval.metrics.verdicts import decided_counts, distractor_decided, gold_decided, pooled

EXPERIMENTS = Path(__file__).resolve().parents[3] / "benchmarks" / "experiments"
S, C, N = "SUPPORT", "CONTRADICT", "NOT ENOUGH INFO"


def prediction(**labels: str) -> dict:
    return {
        "id": "q",
        "evidence": {d: {"label": lab, "sentences": [0]} for d, lab in labels.items()},
    }


def test_a_passage_counts_as_its_document_and_an_unread_one_as_undecided():
    v = prediction(d1=S, d2=N, **{"ssli:q:0": C})
    assert decided_counts(v, ["d1#0", "d1#1"]) == (1, 1)  # two passages, one document
    assert decided_counts(v, ["d2#0", "d9#0"]) == (0, 2)  # NEI; d9 never verified
    assert decided_counts(v, ["ssli:q:0", "ssli:q:1"]) == (1, 2)
    rec = {"verification": v}
    assert distractor_decided(rec, {"d1#0": 1}, ["ssli:q:0"]) == (1, 1)
    assert gold_decided(rec, {"d1#0": 1, "d2#0": 0}, ["ssli:q:0"]) == (1, 1)  # grade 0 is no gold
    assert distractor_decided(rec, {"d1#0": 1}, []) is None  # no distractor: not scored
    assert gold_decided({"qid": "q"}, {"d1#0": 1}, ["x"]) is None  # not verified: not scored


def test_the_run_pools_over_passages_not_over_questions():
    records = {
        "q1": {"verification": prediction(g1=S, **{"ssli:1:0": S, "ssli:1:1": N})},
        "q2": {"verification": prediction(g2=N, **{"ssli:2:0": C})},
        "q3": {"qid": "q3"},  # not verified
    }
    qrels = {"q1": {"g1#0": 1}, "q2": {"g2#0": 1}, "q3": {"g3#0": 1}}
    distractors = {"q1": ["ssli:1:0", "ssli:1:1"], "q2": ["ssli:2:0"], "q3": ["ssli:3:0"]}
    specs = ["distractor_decided", "gold_decided"]
    per_q = evaluate_verdicts_per_query(records, specs, qrels, distractors)
    assert per_q == {
        "distractor_decided": {"q1": (1, 2), "q2": (1, 1)},
        "gold_decided": {"q1": (1, 1), "q2": (0, 1)},
    }
    # pooled: 2 of 3 distractors (the mean of the shares would be 0.75); 1 of 2 gold
    assert evaluate_verdicts(records, specs, qrels, distractors) == pytest.approx(
        {"distractor_decided": 2 / 3, "gold_decided": 0.5}
    )
    assert pooled([]) == 0.0


def test_verdict_specs_are_their_own_kind():
    spec = parse_metric("distractor_decided")
    assert spec.definition.kind == "verdict" and not spec.definition.mean_of_queries
    with pytest.raises(ValueError, match=r"verdict metric; use evaluate_verdicts\(\)"):
        evaluate({"q": ["a"]}, {"q": {"a": 1}}, ["gold_decided"])


def test_a_table_marks_the_fewest_distractors_decided_best():
    from sciera.eval.aggregate import Row, mean_std
    from sciera.eval.report import best_rows

    rows = [
        Row(
            name, "ssli", 3, 1, {"distractor_decided": mean_std([d]), "gold_decided": mean_std([g])}
        )
        for name, d, g in (("gated", 0.1, 0.5), ("open", 0.3, 0.7))
    ]
    assert best_rows(rows, "distractor_decided") == {0}
    assert best_rows(rows, "gold_decided") == {1}


# --- through an SSLI experiment --------------------------------------------------------------

QUESTIONS = {  # qid: (question, gold, [distractors])
    "q1": (
        "What did aspirin do to adenoma risk?",
        "Aspirin lowered adenoma risk.",
        ["Aspirin lowered adenoma counts in mice.", "Adenoma screening is common."],
    ),
    "q2": (
        "What happened to adenoma risk under aspirin?",
        "Aspirin lowered adenoma risk in trials.",
        ["In rats, aspirin lowered adenoma growth."],
    ),
}


def write_ssli(folder: Path) -> Path:
    """Each question's pool: its gold passage, an unrelated one, then its distractors."""
    folder.mkdir(parents=True)
    with open(folder / "instances.jsonl", "w", encoding="utf-8") as fh:
        for qid, (question, gold, fakes) in QUESTIONS.items():
            cands = [(f"g{qid}#0", gold, False), (f"o{qid}#0", "Herbarium specimens.", False)]
            cands += [(f"ssli:{qid}:{i}", t, True) for i, t in enumerate(fakes)]
            rec = {
                "id": f"{qid}/ssli",
                "question": question,
                "answer": "",
                "gold_passage_ids": [f"g{qid}#0"],
                "setting": "ssli",
                "candidates": [
                    {"passage_id": p, "text": t, "is_distractor": d, "distractor_type": ""}
                    for p, t, d in cands
                ],
                "provenance": {},
            }
            fh.write(json.dumps(rec) + "\n")
    return folder


def test_an_ssli_experiment_scores_and_pairs_the_verdicts(tmp_path, registered):
    """A wh-question is verified when the pipeline asks it as a yes/no question; reading
    only the top abstract leaves the distractors (listed last) undecided."""
    from sciera.eval.aggregate import aggregate
    from sciera.eval.compare import compare_pipelines
    from sciera.eval.experiment import parse_experiment
    from sciera.eval.runner import run_experiment
    from sciera.eval.runstore import load_results
    from sciera.settings import load_settings

    verify = {"selector": "overlap", "verdict": "keyword"}
    yesno = {"question_type": "yesno"}
    spec = {
        "name": "ssli_verdicts",
        "dataset": {"type": "ssli", "path": str(write_ssli(tmp_path / "ssli"))},
        "metrics": ["distractor_decided", "gold_decided"],
        "repeats": 1,
        "pipelines": [
            {
                "name": "top1",
                "retriever": "candidates",
                "verify": {**verify, "abstracts": 1},
                "generator_params": yesno,
            },
            {
                "name": "every",
                "retriever": "candidates",
                "verify": {**verify, "abstracts": 50},
                "generator_params": yesno,
            },
            {"name": "unasked", "retriever": "candidates", "verify": {**verify, "abstracts": 50}},
        ],
    }
    out = tmp_path / "out"
    run_experiment(
        parse_experiment(spec, "v.yaml"), out, settings=load_settings(home=tmp_path / "home")
    )
    results = load_results(out)
    cells = {r.pipeline: {c: v.mean for c, v in r.cells.items()} for r in aggregate(results)}
    assert cells["top1"]["distractor_decided"] == 0.0 and cells["top1"]["gold_decided"] == 1.0
    # "lowered" decides q1's first distractor and q2's only one, not "screening is common"
    assert cells["every"]["distractor_decided"] == pytest.approx(2 / 3)
    assert cells["every"]["gold_decided"] == 1.0
    assert "distractor_decided" not in cells["unasked"]  # wh-questions: never verified
    by = {(c.pipeline, c.metric): c for c in compare_pipelines(results, baseline="top1")}
    c = by[("every", "distractor_decided")]
    assert (c.baseline_mean, c.mean, c.test.test, c.test.n) == (
        0.0,
        pytest.approx(2 / 3),
        "mcnemar_exact",
        2,
    )
    assert (c.test.b_only, c.test.a_only, c.test.p_value) == (2, 0, 0.5)
    assert by[("every", "gold_decided")].test.p_value == 1.0
    assert ("unasked", "distractor_decided") not in by


def test_verify_ssli_yaml_loads_and_names_its_commands(tmp_path: Path) -> None:
    name = "verify_ssli.yaml"
    text = (EXPERIMENTS / name).read_text(encoding="utf-8")
    assert f"sciera eval run benchmarks/experiments/{name} --out " in text
    assert "sciera eval report benchmarks/results/verify_ssli_eval" in text
    data = yaml.safe_load(text)
    data["dataset"]["path"] = str(write_ssli(tmp_path / "ssli"))  # the restored set's stand-in
    from sciera.eval.experiment import parse_experiment

    exp = parse_experiment(data, name, EXPERIMENTS)
    assert exp.name == "verify_ssli" and exp.dataset.split == "ssli"
    assert set(exp.metrics) >= {"distractor_decided", "gold_decided"}
    for p in exp.pipelines:
        assert p.retriever == "candidates" and p.verify is not None
        assert p.generator_params.get("question_type") == "yesno"  # wh-questions verified
        assert p.verify.abstracts >= 30  # every abstract of a pool (30 passages) is read
