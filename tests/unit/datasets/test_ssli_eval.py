"""A dataset made by the SSLI builder (scripted LLM, tiny corpus) goes straight into
`sciera eval run`: the bm25 pipeline of benchmarks/experiments/ssli_scifact.yaml gives
per-setting scores that follow from how the corpus is written."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
import yaml
from test_ssli_builder import _build, _llm, make_corpus

from sciera.datasets.ssli.io import load_ssli
from sciera.eval.experiment import parse_experiment
from sciera.eval.report import write_report
from sciera.eval.runner import run_experiment

REPO = Path(__file__).resolve().parents[3]
EXAMPLE = REPO / "benchmarks" / "experiments" / "ssli_scifact.yaml"


@pytest.fixture(scope="module")
def corpus(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """The builder tests' corpus: N_DOCS abstracts, ingested, BM25-indexed."""
    return make_corpus(tmp_path_factory)


def test_built_dataset_scored_per_setting_by_bm25(corpus: Path, tmp_path: Path) -> None:
    built = tmp_path / "ssli"
    _build(corpus, built, _llm())
    instances = load_ssli(built)
    # 4 questions x (base, ssli), 5 candidates; SSLI: one accepted distractor, appended last
    assert sorted({i.setting for i in instances}) == ["base", "ssli"] and len(instances) == 8
    for inst in instances:
        n_dis = sum(c.is_distractor for c in inst.candidates)
        assert (len(inst.candidates), n_dis) == (5, 1 if inst.setting == "ssli" else 0)

    spec = yaml.safe_load(EXAMPLE.read_text())
    spec["dataset"]["path"] = str(built)
    spec["pipelines"] = spec["pipelines"][:1]  # bm25
    out = tmp_path / "res"
    run_experiment(parse_experiment(spec, "ssli_scifact.yaml"), out)
    write_report(out, plots=False)
    rows = json.loads((out / "report" / "table.json").read_text())["rows"]
    got = {
        r["setting"]: {c: v["mean"] for c, v in r["cells"].items() if not c.startswith("s/q")}
        for r in rows
    }
    # Each question names its document's own compound ("compound3"), a term no other
    # passage holds, and the gold passage repeats the question's topic: BM25 puts the gold
    # passage first in both settings (hit@1 1, RP 100). The distractor ("Compound dosing
    # alters ...") never beats it (CDR 1) and is one of the 5 passages in the top 5 (NRS 4/5).
    assert got["base"] == pytest.approx({"hit@1": 1.0, "hit@3": 1.0, "rp": 100.0, "nrs@5": 1.0})
    assert got["ssli"] == pytest.approx(
        {"hit@1": 1.0, "hit@3": 1.0, "rp": 100.0, "nrs@5": 0.8, "cdr": 1.0}
    )


def test_specific_only_leaves_out_questions_naming_no_subject(corpus: Path, tmp_path: Path) -> None:
    from test_ssli_builder import CONFIG

    from sciera.datasets.loaders import load_dataset
    from sciera.datasets.ssli.config import BuildConfig
    from sciera.datasets.ssli.specificity import SPECIFICITY_FILE
    from sciera.errors import InputError, ScieraError

    built = tmp_path / "ssli"
    config = BuildConfig(**{**CONFIG.to_dict(), "max_topic_share": None})
    _build(corpus, built, _llm(vague=True), config)
    from sciera.corpus.store import PassageStore
    from sciera.datasets.ssli.specificity import TopicIndex, check_set

    with pytest.raises(InputError, match="sciera dataset check"):
        load_dataset("ssli", built, specific_only=True)
    with PassageStore.open(corpus) as store:  # what `sciera dataset check` does
        data = check_set(load_ssli(built), TopicIndex.from_store(store), built, corpus="c")
    assert (data["specific"], data["underspecified"]) == (4, 1)
    vague = [r for r in data["questions"].values() if not r["specific"]]
    assert vague[0]["question"] == "What was the result of the randomized trial?"
    assert vague[0]["documents"] == 10
    every = load_dataset("ssli", built)
    specific = load_dataset("ssli", built, specific_only=True)
    assert len(every.queries) == 10 and len(specific.queries) == 8  # both settings
    left_out = set(every.queries) - set(specific.queries)
    assert {every.queries[q] for q in left_out} == {"What was the result of the randomized trial?"}
    spec = yaml.safe_load(EXAMPLE.read_text())
    spec["dataset"] = {"type": "beir", "path": str(built), "specific_only": True}
    with pytest.raises(ScieraError, match="specific_only"):
        parse_experiment(spec, "x.yaml")
    (built / SPECIFICITY_FILE).write_text("{}")
    with pytest.raises(InputError, match="not a specificity file"):
        load_dataset("ssli", built, specific_only=True)
