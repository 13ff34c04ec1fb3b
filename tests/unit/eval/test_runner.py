"""The experiment runner on a small SSLI-format dataset with a scripted LLM reranker.

Rankings come from the dataset's fixed candidate pools (``retriever: candidates``), so
no corpus or model is needed; the LLM pointwise reranker reads P("yes") from the
scripted distributions, which differ per seed to make repeats differ.
"""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from fakes import ScriptedLLM
from sciera.eval.experiment import parse_experiment
from sciera.eval.report import write_report
from sciera.eval.runner import run_experiment

# q1, q2: base; q3: ssli. Pool order: distractor first, so the first stage ranks gold 2nd.
INSTANCES = [
    ("q1", "base", "GOLD-ONE alpha", ["DIS-ONE beta"]),
    ("q2", "base", "GOLD-TWO gamma", ["DIS-TWO delta", "DIS-TWO-B eps"]),
    ("q3", "ssli", "GOLD-THREE zeta", ["DIS-THREE eta"]),
]


def write_ssli(path: Path) -> Path:
    with open(path, "w", encoding="utf-8") as fh:
        for qid, setting, gold, dis in INSTANCES:
            cands = [
                {
                    "passage_id": f"{qid}-d{i}",
                    "text": t,
                    "is_distractor": True,
                    "distractor_type": "misleading",
                }
                for i, t in enumerate(dis)
            ]
            cands.append(
                {
                    "passage_id": f"{qid}-g",
                    "text": gold,
                    "is_distractor": False,
                    "distractor_type": "",
                }
            )
            rec = {
                "id": qid,
                "question": f"question {qid}?",
                "answer": f"answer {qid}",
                "gold_passage_ids": [f"{qid}-g"],
                "setting": setting,
                "candidates": cands,
                "provenance": {},
            }
            fh.write(json.dumps(rec) + "\n")
    return path


def scripted(settings, seed: int) -> ScriptedLLM:
    """Seed 7 prefers every gold passage; seed 8 prefers q2's first distractor."""
    llm = ScriptedLLM(model_id=f"scripted#seed={seed}")
    if seed == 8:
        llm.on("DIS-TWO delta", probs={"yes": 0.95, "no": 0.05})
    llm.on("GOLD-", probs={"yes": 0.9, "no": 0.1})
    llm.on("DIS-", probs={"yes": 0.2, "no": 0.8})
    return llm


def experiment(tmp_path: Path, repeats: int = 2):
    data = write_ssli(tmp_path / "ssli.jsonl")
    spec = {
        "name": "unit",
        "dataset": {"type": "ssli", "path": str(data)},
        "metrics": ["hit@1", "mrr@10", "cdr", "nrs@1"],
        "repeats": repeats,
        "seeds": [7, 8],
        "pipelines": [
            {"name": "pool", "retriever": "candidates", "depth": 30},
            {"name": "pointwise", "retriever": "candidates", "reranker": "llm_pointwise"},
        ],
    }
    return parse_experiment(spec, "unit.yaml")


def table(out: Path) -> dict:
    rows = json.loads((out / "report" / "table.json").read_text())["rows"]
    return {
        (r["pipeline"], r["setting"]): {
            c: v for c, v in r["cells"].items() if not c.startswith(("s/q", "tok/q"))
        }
        for r in rows
    }


def test_table_is_hand_checked_mean_and_std(tmp_path: Path) -> None:
    out = tmp_path / "res"
    run_experiment(experiment(tmp_path), out, llm_factory=scripted)
    paths = write_report(out, plots=False)
    t = table(out)
    # pool: gold always 2nd or 3rd -> hit@1 = 0 in both repeats, mrr(base) = (1/2 + 1/3)/2
    assert t[("pool", "base")]["hit@1"]["values"] == [0.0, 0.0]
    assert t[("pool", "base")]["mrr@10"]["mean"] == pytest.approx((1 / 2 + 1 / 3) / 2)
    # pointwise base: seed 7 -> both golds first (1.0); seed 8 -> q2 gold 2nd (0.5)
    cell = t[("pointwise", "base")]["hit@1"]
    assert cell["values"] == [1.0, 0.5]
    assert cell["mean"] == pytest.approx(0.75)
    assert cell["std"] == pytest.approx(0.3535533906)  # sqrt(2 * 0.25**2 / 1)
    # CDR pooled over (gold, distractor) pairs: base has 3 pairs; seed 8 loses 1
    assert t[("pointwise", "base")]["cdr"]["values"] == pytest.approx([1.0, 2 / 3])
    assert t[("pointwise", "ssli")]["hit@1"]["values"] == [1.0, 1.0]
    md = paths["md"].read_text()
    assert "| pointwise | base | 2 | 2 | **0.7500 ± 0.3536** |" in md
    assert "| pool | base | 2 | 2 | 0.0000 ± 0.0000 |" in md
    manifest = json.loads((out / "manifest.json").read_text())
    assert manifest["plan"] == {"pool": 2, "pointwise": 2}
    assert manifest["repeats"]["pointwise"]["1"]["seed"] == 8


def test_default_repeats_three_with_llm_one_without(tmp_path: Path) -> None:
    exp = experiment(tmp_path).model_copy(update={"repeats": None, "seeds": None})
    assert [exp.repeats_of(p) for p in exp.pipelines] == [1, 3]


class Interrupt(Exception):
    pass


def reported(exp, out: Path) -> dict:
    """Run ``exp`` into ``out`` in one go and return its report table."""
    run_experiment(exp, out, llm_factory=scripted)
    write_report(out, plots=False)
    return table(out)


def test_resume_after_interruption_gives_the_same_table(tmp_path: Path) -> None:
    exp = experiment(tmp_path)
    full = reported(exp, tmp_path / "full")

    out = tmp_path / "interrupted"
    seen = []

    def stop_mid_run(label: str, done: int, total: int) -> None:
        seen.append(label)
        if len(seen) == 7:  # pool r0, pool r1 done (3 + 3); one question into pointwise r0
            raise Interrupt

    with pytest.raises(Interrupt):
        run_experiment(exp, out, llm_factory=scripted, progress=stop_mid_run)
    log = out / "runs" / "pointwise" / "r0" / "results.jsonl"
    assert len(log.read_text().splitlines()) == 1
    with open(log, "a", encoding="utf-8") as fh:  # a write cut short by a kill
        fh.write('{"qid": "q2", "setting": "ba')
    calls = []

    def counting(settings, seed):
        llm = scripted(settings, seed)
        calls.append(llm)
        return llm

    summary = run_experiment(exp, out, llm_factory=counting)
    assert summary.skipped == {"pool/r0": 3, "pool/r1": 3, "pointwise/r0": 1, "pointwise/r1": 0}
    assert summary.ran["pointwise/r0"] == 2
    # only unfinished questions reach the LLM: r0 q2 (3 candidates) + q3 (2); r1 all (7)
    assert sum(len(c.calls) for c in calls) == 5 + 7
    for folder in (out / "runs").glob("*/r*"):
        lines = (folder / "results.jsonl").read_text().splitlines()
        qids = [json.loads(line)["qid"] for line in lines]
        assert sorted(qids) == ["q1", "q2", "q3"]
    write_report(out, plots=False)
    assert table(out) == full
    trec = (out / "runs" / "pointwise" / "r0" / "run.trec").read_text().splitlines()
    assert len(trec) == 2 + 3 + 2 and trec[0].split()[:3] == ["q1", "Q0", "q1-g"]


def test_other_experiment_in_results_dir_is_refused(tmp_path: Path) -> None:
    from sciera.errors import ScieraError

    exp = experiment(tmp_path)
    run_experiment(exp, tmp_path / "res", llm_factory=scripted)
    other = exp.model_copy(update={"name": "another"})
    with pytest.raises(ScieraError, match="different experiment"):
        run_experiment(other, tmp_path / "res", llm_factory=scripted)


def test_other_metrics_score_the_stored_records_without_running_again(tmp_path: Path) -> None:
    exp = experiment(tmp_path)
    out = tmp_path / "res"
    run_experiment(exp, out, llm_factory=scripted)
    before = {f: f.read_bytes() for f in out.glob("runs/*/r*/results.jsonl")}
    rescored = exp.model_copy(update={"metrics": ["hit@5"]})

    def refusing(settings, seed: int):
        raise AssertionError("a finished run builds no LLM again")

    run_experiment(rescored, out, llm_factory=refusing)  # nothing runs again
    assert {f: f.read_bytes() for f in out.glob("runs/*/r*/results.jsonl")} == before
    write_report(out, plots=False)
    assert "hit@5" in (out / "report" / "table.md").read_text()
    assert json.loads((out / "manifest.json").read_text())["experiment"]["metrics"] == ["hit@5"]


def test_a_results_dir_of_an_incompatible_version_is_refused_untouched(tmp_path: Path) -> None:
    from sciera.errors import ScieraError

    exp = experiment(tmp_path)
    out = tmp_path / "res"
    run_experiment(exp, out, llm_factory=scripted)
    manifest = out / "manifest.json"
    data = json.loads(manifest.read_text())
    data["experiment"]["pipelines"][0]["retriever"] = {"kind": "from another version"}
    manifest.write_text(json.dumps(data))
    before = {p: p.read_bytes() for p in out.rglob("*") if p.is_file()}
    with pytest.raises(ScieraError, match=r"res: holds results this version cannot read back"):
        run_experiment(exp, out, llm_factory=scripted)
    assert {p: p.read_bytes() for p in out.rglob("*") if p.is_file()} == before


def test_a_pipeline_whose_model_files_changed_is_not_resumed(tmp_path: Path, monkeypatch) -> None:
    from sciera.errors import ScieraError
    from sciera.rerank.llm_pointwise import LLMPointwiseReranker

    model = {"files": "A"}  # what the reranker's model folder holds
    monkeypatch.setattr(
        LLMPointwiseReranker,
        "identity",
        classmethod(lambda cls, settings, **params: model["files"]),
        raising=False,
    )
    exp, out = experiment(tmp_path), tmp_path / "res"
    run_experiment(exp, out, llm_factory=scripted)
    manifest = json.loads((out / "manifest.json").read_text())
    assert {r["identity"] for r in manifest["repeats"]["pointwise"].values()} == {"A"}
    assert {r["identity"] for r in manifest["repeats"]["pool"].values()} == {""}
    assert run_experiment(exp, out, llm_factory=scripted).ran["pointwise/r0"] == 0

    model["files"] = "B"  # retrained or replaced under the same name
    before = {p: p.read_bytes() for p in out.rglob("*") if p.is_file()}
    with pytest.raises(ScieraError, match=r"pipelines\[1\] \(pointwise\): the model it loads ch"):
        run_experiment(exp, out, llm_factory=scripted)
    assert {p: p.read_bytes() for p in out.rglob("*") if p.is_file()} == before

    # repeats recorded before identities existed are taken as they are, and a resume that
    # made none of a repeat does not claim to know which model made it
    for r in manifest["repeats"]["pointwise"].values():
        del r["identity"]
    (out / "manifest.json").write_text(json.dumps(manifest))
    run_experiment(exp, out, llm_factory=scripted)
    repeats = json.loads((out / "manifest.json").read_text())["repeats"]["pointwise"]
    assert all("identity" not in r for r in repeats.values())


def test_a_cross_encoder_is_identified_by_its_folder_contents(tmp_path: Path) -> None:
    from sciera.rerank.cross_encoder import CrossEncoderReranker
    from sciera.settings import load_settings

    settings = load_settings(home=str(tmp_path / "home"))
    folder = tmp_path / "ce"
    folder.mkdir()
    (folder / "config.json").write_text("{}")
    (folder / "model.safetensors").write_bytes(b"weights-1")
    (folder / "README.md").write_text("card")
    first = CrossEncoderReranker.identity(settings, model=str(folder))
    assert len(first) == 16
    (folder / "README.md").write_text("card, reworded")
    assert CrossEncoderReranker.identity(settings, model=str(folder)) == first
    (folder / "sciera-calibrator.json").write_text("{}")  # recalibrated
    recalibrated = CrossEncoderReranker.identity(settings, model=str(folder))
    assert recalibrated != first
    (folder / "model.safetensors").write_bytes(b"weights-2")  # retrained
    assert CrossEncoderReranker.identity(settings, model=str(folder)) not in {first, recalibrated}
    assert CrossEncoderReranker.identity(settings, model="org/hub-model") == "org/hub-model"


def test_a_pipeline_added_later_runs_alone_and_the_others_resume(tmp_path: Path) -> None:
    from sciera.errors import ScieraError

    exp = experiment(tmp_path)
    full = reported(exp, tmp_path / "full")

    out = tmp_path / "grown"
    first = exp.model_copy(update={"pipelines": exp.pipelines[:1]})
    run_experiment(first, out, llm_factory=scripted)
    # a corpus matters only to pipelines that search it: the pool pipeline resumes
    grown = exp.model_copy(update={"corpus": tmp_path / "corpus"})
    summary = run_experiment(grown, out, llm_factory=scripted)
    assert summary.skipped == {"pool/r0": 3, "pool/r1": 3, "pointwise/r0": 0, "pointwise/r1": 0}
    write_report(out, plots=False)
    assert table(out) == full

    changed = exp.pipelines[1].model_copy(update={"reranker_params": {"batch": 2}})
    edited = exp.model_copy(update={"pipelines": [exp.pipelines[0], changed]})
    with pytest.raises(ScieraError, match=r"pipelines\[1\] \(pointwise\): differs"):
        run_experiment(edited, out, llm_factory=scripted)
    with pytest.raises(ScieraError, match=r"different experiment \('unit', other dataset\)"):
        other = exp.dataset.model_copy(update={"limit": 2})
        run_experiment(exp.model_copy(update={"dataset": other}), out, llm_factory=scripted)

    # a pipeline left out of a rerun keeps its results in the directory and the report
    summary = run_experiment(exp.model_copy(update={"pipelines": exp.pipelines[1:]}), out)
    assert summary.skipped == {"pointwise/r0": 3, "pointwise/r1": 3}
    write_report(out, plots=False)
    assert table(out) == full


def test_only_the_pipelines_named_run_and_the_others_keep_their_place(
    tmp_path: Path, monkeypatch
) -> None:
    """`sciera eval run --pipeline NAME`: a pipeline whose model was replaced since its
    results were made no longer blocks running another one beside it."""
    from sciera.errors import ScieraError
    from sciera.rerank.llm_pointwise import LLMPointwiseReranker

    model = {"files": "A"}
    monkeypatch.setattr(
        LLMPointwiseReranker,
        "identity",
        classmethod(lambda cls, settings, **params: model["files"]),
        raising=False,
    )
    exp = experiment(tmp_path)
    out = tmp_path / "res"
    first = exp.model_copy(update={"pipelines": exp.pipelines[1:]})  # pointwise alone
    run_experiment(first, out, llm_factory=scripted)
    model["files"] = "B"  # the pointwise pipeline's model replaced under its name
    with pytest.raises(ScieraError, match=r"\(pointwise\): the model it loads changed"):
        run_experiment(exp, out, llm_factory=scripted)
    summary = run_experiment(exp.only(["pool"]), out, llm_factory=scripted)
    assert summary.ran == {"pool/r0": 3, "pool/r1": 3}
    manifest = json.loads((out / "manifest.json").read_text())
    assert [p["name"] for p in manifest["experiment"]["pipelines"]] == ["pointwise", "pool"]
    assert {r["identity"] for r in manifest["repeats"]["pointwise"].values()} == {"A"}
    write_report(out, plots=False)
    model["files"] = "A"
    assert table(out) == reported(exp, tmp_path / "full")

    assert exp.only([]) is exp
    assert [p.name for p in exp.only(["pointwise", "pool"]).pipelines] == ["pool", "pointwise"]
    with pytest.raises(ScieraError, match=r"'ranker' is not in experiment 'unit' \(its pipe"):
        exp.only(["ranker"])


def test_neutral_pool_order_hides_where_distractors_were_listed(tmp_path: Path) -> None:
    exp = experiment(tmp_path)
    spec = {"name": "set", "retriever": "candidates", "pool_order": "neutral"}
    exp = exp.model_copy(update={"pipelines": [type(exp.pipelines[0])(**spec)]})
    out = tmp_path / "res"
    run_experiment(exp, out, llm_factory=scripted)
    lines = (out / "runs" / "set" / "r0" / "results.jsonl").read_text().splitlines()
    firsts = {r["qid"]: r["first"] for r in map(json.loads, lines)}
    assert all({s for _, s in first} == {1.0} for first in firsts.values())  # no scores
    # the order is a hash of (question, id), not the listed one (distractors, then gold)
    from sciera.eval.metrics.ranking import neutral_order

    for qid, first in firsts.items():
        ids = [d for d, _ in first]
        assert ids == neutral_order(qid, dict.fromkeys(ids, 0.0))
    assert [d for d, _ in firsts["q2"]] == ["q2-g", "q2-d0", "q2-d1"]  # listed: d0, d1, g


def test_report_tests_each_pipeline_against_the_baseline_question_by_question(
    tmp_path: Path,
) -> None:
    from sciera.errors import ScieraError
    from sciera.eval.compare import compare_pipelines
    from sciera.eval.runstore import load_results

    out = tmp_path / "res"
    run_experiment(experiment(tmp_path), out, llm_factory=scripted)
    paths = write_report(out, plots=False)
    sig = {
        (c["setting"], c["metric"]): c
        for c in json.loads(paths["significance"].read_text())
        if c["pipeline"] == "pointwise"
    }
    assert "cdr" not in {m for _, m in sig}  # pooled over pairs, not a mean over questions
    # base hit@1 per question, mean over the 2 repeats: pool (0, 0), pointwise (1, 0.5);
    # sign flips of (1, 0.5): |mean| 0.75, 0.25, 0.25, 0.75 -> p = 2/4
    base = sig[("base", "hit@1")]
    assert (base["baseline_mean"], base["mean"], base["diff"]) == (0.0, 0.75, 0.75)
    assert base["test"] == "paired_randomization" and base["p_value"] == 0.5
    # ssli: one question, 0 vs 1 in both repeats -> McNemar, one discordant question
    ssli = sig[("ssli", "hit@1")]
    assert ssli["test"] == "mcnemar_exact" and (ssli["b_only"], ssli["a_only"]) == (1, 0)
    assert ssli["p_value"] == 1.0
    md = paths["md"].read_text()
    assert "### Against pool" in md
    assert "| pointwise | base | hit@1 | 2 | 0.0000 | 0.7500 | +0.7500 | 0.5 |" in md
    flipped = compare_pipelines(load_results(out), baseline="pointwise")
    assert {c.pipeline for c in flipped} == {"pool"}
    assert next(c for c in flipped if (c.setting, c.metric) == ("base", "hit@1")).diff == -0.75
    with pytest.raises(ScieraError, match="baseline 'nope' is not a pipeline"):
        compare_pipelines(load_results(out), baseline="nope")


def test_a_verify_pipeline_is_identified_by_its_verifiers_files(tmp_path: Path, monkeypatch):
    """A verifier rebuilt under its name (the shipped one by its recipe) is not resumed
    over, nor are results recorded before verifiers were hashed (which model made them is
    not known); repeats with no identity at all (older still) are taken as they are."""
    from sciera.errors import ScieraError
    from sciera.eval.experiment import ExperimentPipeline
    from sciera.eval.runner import pipeline_identity
    from sciera.eval.runstore import _check_identities
    from sciera.settings import load_settings
    from sciera.verify import network

    files = {"scifact-verifier": "A"}
    monkeypatch.setattr(network, "verifier_identity", lambda model, home=None: files[model])
    settings = load_settings(home=str(tmp_path / "home"))
    p = ExperimentPipeline(name="v", retriever="bm25", verify={"abstracts": 3})
    assert pipeline_identity(p, settings) == "verifier:A"
    assert pipeline_identity(p.model_copy(update={"verify": None}), settings) == ""
    exp = experiment(tmp_path).model_copy(update={"pipelines": [p]})
    made = {"repeats": {"v": {"0": {"identity": "verifier:A"}}}}
    _check_identities(tmp_path, exp, made, {"v": "verifier:A"})
    with pytest.raises(ScieraError, match=r"pipelines\[0\] \(v\): the model it loads changed"):
        _check_identities(tmp_path, exp, made, {"v": "verifier:B"})
    older = {"repeats": {"v": {"0": {"identity": ""}}}}  # before verifiers were hashed
    with pytest.raises(ScieraError, match=r"\(v\): the model it loads changed .*\( -> verif"):
        _check_identities(tmp_path, exp, older, {"v": "verifier:A"})
    _check_identities(tmp_path, exp, {"repeats": {"v": {"0": {}}}}, {"v": "verifier:B"})


def test_a_verifier_that_does_not_resolve_is_identified_by_its_name(tmp_path: Path) -> None:
    from sciera.verify.network import verifier_identity

    assert verifier_identity(str(tmp_path / "nothing"), tmp_path) == str(tmp_path / "nothing")
    shipped = verifier_identity("scifact-verifier", tmp_path / "home")
    assert len(shipped) == 16 and shipped == verifier_identity(
        "scifact-verifier", tmp_path / "home"
    )
