"""benchmarks/experiments/ssli_scifact.yaml: it loads, and its pipelines score a tiny
hand-written SSLI set per setting (Base vs SSLI) with hand-checked values. No model:
the dense members get a bag-of-words stand-in embedder."""

from __future__ import annotations

import json
import re
import shutil
from pathlib import Path

import numpy as np
import pytest
import yaml

from sciera.errors import ScieraError
from sciera.eval.experiment import load_experiment, parse_experiment
from sciera.eval.report import write_report
from sciera.eval.runner import run_experiment

REPO = Path(__file__).resolve().parents[3]
EXAMPLE = REPO / "benchmarks" / "experiments" / "ssli_scifact.yaml"
DEEPERA = EXAMPLE.with_name("ssli_scifact_deepera.yaml")

Q1 = "Is vitamin D linked to fracture risk?"  # tokens: vitamin link fractur risk
Q2 = "Does aspirin prevent stroke?"  # tokens: aspirin prevent stroke
# (id, setting, question, gold text, other candidates, distractors appended at the end),
# the layout `sciera dataset build` writes: SSLI replaces the last Base candidates.
INSTANCES = [
    (
        "q1/base",
        "base",
        Q1,
        "vitamin supplementation lowers fracture risk",
        ["statins cause myalgia", "galaxies rotate quickly", "fracture healing in mice"],
        ["coffee consumption habits", "penguin migration routes"],
        False,
    ),
    (
        "q1/ssli",
        "ssli",
        Q1,
        "vitamin supplementation lowers fracture risk",
        ["statins cause myalgia", "galaxies rotate quickly", "fracture healing in mice"],
        ["vitamin fracture risk vitamin fracture risk", "fracture clinics"],
        True,
    ),
    (
        "q2/base",
        "base",
        Q2,
        "aspirin prevents stroke in adults",
        [
            "aspirin price increased",
            "stroke units staffing",
            "stroke galaxies rotate quickly far away",
        ],
        ["coffee habits", "penguin routes"],
        False,
    ),
    (
        "q2/ssli",
        "ssli",
        Q2,
        "aspirin prevents stroke in adults",
        [
            "aspirin price increased",
            "stroke units staffing",
            "stroke galaxies rotate quickly far away",
        ],
        ["stroke rehabilitation", "herbarium specimens"],
        True,
    ),
]


def write_instances(path: Path) -> Path:
    """``path/instances.jsonl``: gold first, then the others, then the last two."""
    path.mkdir(parents=True, exist_ok=True)
    with open(path / "instances.jsonl", "w", encoding="utf-8") as fh:
        for qid, setting, question, gold, others, last, distract in INSTANCES:
            base = qid.split("/")[0]
            texts = [
                (f"{base}-g", gold, False),
                *[(f"{base}-c{i}", t, False) for i, t in enumerate(others)],
            ]
            texts += [
                (f"ssli:{base}:{i}" if distract else f"{base}-e{i}", t, distract)
                for i, t in enumerate(last)
            ]
            rec = {
                "id": qid,
                "question": question,
                "answer": "",
                "gold_passage_ids": [f"{base}-g"],
                "setting": setting,
                "candidates": [
                    {
                        "passage_id": pid,
                        "text": text,
                        "is_distractor": dis,
                        "distractor_type": "misleading" if dis else "",
                    }
                    for pid, text, dis in texts
                ],
                "provenance": {},
            }
            fh.write(json.dumps(rec) + "\n")
    return path


class WordEmbedder:
    """Bag of words (lowercase ``\\w+``) hashed into 256 dims; a stand-in for MiniLM."""

    name, dim = "words", 256

    def _embed(self, texts) -> np.ndarray:
        out = np.zeros((len(texts), 256), dtype=np.float32)
        for i, text in enumerate(texts):
            for word in re.findall(r"\w+", text.lower()):
                out[i, sum(map(ord, word)) % 256] += 1.0
        return out

    def embed_queries(self, texts):
        return self._embed(texts)

    def embed_passages(self, texts, progress=None):
        return self._embed(texts)


def example(tmp_path: Path) -> Path:
    """The example YAML at its place in a repository tree whose corpora/ holds the set."""
    exp_dir = tmp_path / "benchmarks" / "experiments"
    exp_dir.mkdir(parents=True)
    shutil.copy(EXAMPLE, exp_dir / EXAMPLE.name)
    write_instances(tmp_path / "corpora" / "ssli-scifact")
    return exp_dir / EXAMPLE.name


def rows(out: Path) -> dict:
    table = json.loads((out / "report" / "table.json").read_text())["rows"]
    return {
        (r["pipeline"], r["setting"]): {
            c: v["mean"] for c, v in r["cells"].items() if not c.startswith("s/q")
        }
        for r in table
    }


def test_example_loads_without_models_or_absolute_paths(tmp_path: Path) -> None:
    text = EXAMPLE.read_text()
    assert "/root" not in text
    assert "sciera dataset build --corpus corpora/scifact --out corpora/ssli-scifact" in text
    assert "sciera eval run benchmarks/experiments/ssli_scifact.yaml" in text
    exp = load_experiment(example(tmp_path))
    assert exp.dataset.type == "ssli"
    assert exp.dataset.path.resolve() == (tmp_path / "corpora" / "ssli-scifact").resolve()
    assert exp.metrics == ["hit@1", "hit@3", "rp", "nrs@5", "cdr"]
    assert [(p.name, p.retriever, p.reranker) for p in exp.pipelines] == [
        ("bm25", "candidates", "bm25"),
        ("dense", "candidates", "embedding"),
        ("dense-e5", "candidates", "embedding"),
        ("hybrid", "candidates", "ensemble"),
    ]
    assert exp.pipelines[2].reranker_params == {"backend": "e5"}
    assert exp.pipelines[3].reranker_params == {
        "normalization": "rank",
        "members": [{"name": "bm25", "weight": 1.0}, {"name": "embedding", "weight": 1.0}],
    }
    # no LLM anywhere: one repeat each, and the whole pool reaches the reranker
    assert [exp.repeats_of(p) for p in exp.pipelines] == [1, 1, 1, 1]
    assert all(p.rerank_depth is not None and p.rerank_depth >= 30 for p in exp.pipelines)


def test_deepera_experiment_is_a_paired_subset_beside_hybrid(tmp_path: Path) -> None:
    path = example(tmp_path)
    shutil.copy(DEEPERA, path.parent / DEEPERA.name)
    exp = load_experiment(path.parent / DEEPERA.name)
    assert exp.dataset.path.resolve() == (tmp_path / "corpora" / "ssli-scifact").resolve()
    hybrid, deepera = exp.pipelines
    assert hybrid.model_dump(exclude={"name"}) == load_experiment(path).pipelines[3].model_dump(
        exclude={"name"}
    )
    assert (deepera.reranker, deepera.pool_order, exp.repeats_of(deepera)) == (
        "deepera",
        "neutral",
        1,
    )
    params = deepera.reranker_params
    # no filter: the whole reranked order is scored (an experiment's default)
    assert (deepera.filter.use_tau, deepera.filter.top_k) == (False, None)
    calibrator = json.loads((REPO / params["calibrator"]).read_text())
    assert calibrator["features"] == ["grade"]  # reads no rank: the pool is a set


def test_bad_ensemble_member_is_reported_at_load(tmp_path: Path) -> None:
    spec = yaml.safe_load(EXAMPLE.read_text())
    spec["dataset"]["path"] = str(write_instances(tmp_path / "set"))
    spec["pipelines"][3]["reranker_params"]["members"][1]["name"] = "embeding"
    with pytest.raises(ScieraError) as exc:
        parse_experiment(spec, "x.yaml")
    assert str(exc.value).startswith(
        "x.yaml: pipelines[3]: reranker_params.members[1]: unknown reranker 'embeding'"
    )


def test_bm25_per_setting_scores_are_hand_checked(tmp_path: Path) -> None:
    exp = load_experiment(example(tmp_path))
    bm25_only = exp.model_copy(update={"pipelines": exp.pipelines[:1]})
    out = tmp_path / "res"
    run_experiment(bm25_only, out)
    write_report(out, plots=False)
    t = rows(out)
    # BM25 over each 6-passage pool. Tied scores would be ordered neutrally (a hash of
    # question and id); no distractor here ties with another passage.
    # q1/base  gold (vitamin fractur risk) 1st, c2 (fractur) 2nd, the rest 0
    # q1/ssli  D0 "vitamin fracture risk" twice beats gold on every term (tf 2), then gold,
    #          D1 "fracture clinics" (2 tokens) above c2 (3 tokens), c1 and c0 at 0
    #          -> gold 2nd: hit@1 0, RP 100 (6-2)/5 = 80, NRS@5 3/5, CDR 1 of 2 pairs
    # q2/base  gold (aspirin prevent stroke) 1st
    # q2/ssli  gold, c0 (aspirin: df 2), D0 "stroke rehabilitation" (stroke: df 4, 2 tokens),
    #          c1 (stroke, 3 tokens), c2 (stroke, 6 tokens), D1 0 (last)
    #          -> gold 1st: RP 100, NRS@5 4/5, CDR 2 of 2 pairs
    assert t[("bm25", "base")] == pytest.approx(
        {"hit@1": 1.0, "hit@3": 1.0, "rp": 100.0, "nrs@5": 1.0}  # no distractor: no CDR
    )
    assert t[("bm25", "ssli")] == pytest.approx(
        {"hit@1": 0.5, "hit@3": 1.0, "rp": 90.0, "nrs@5": 0.7, "cdr": 0.75}
    )
    run = (out / "runs" / "bm25" / "r0" / "run.trec").read_text().splitlines()
    q1_ssli = [line.split()[2] for line in run if line.startswith("q1/ssli ")]
    assert q1_ssli == ["ssli:q1:0", "q1-g", "ssli:q1:1", "q1-c2", "q1-c1", "q1-c0"]
    md = (out / "report" / "table.md").read_text()
    assert "| bm25 | base | 2 | 1 |" in md and "| bm25 | ssli | 2 | 1 |" in md


def test_dense_and_hybrid_run_with_a_stand_in_embedder(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    import sciera.embed.registry

    monkeypatch.setattr(sciera.embed.registry, "create_embedder", lambda *_: WordEmbedder())
    out = tmp_path / "res"
    summary = run_experiment(load_experiment(example(tmp_path)), out)
    assert summary.ran == {"bm25/r0": 4, "dense/r0": 4, "dense-e5/r0": 4, "hybrid/r0": 4}
    write_report(out, plots=False)
    t = rows(out)
    for name in ("bm25", "dense", "dense-e5", "hybrid"):
        assert set(t[(name, "ssli")]) >= {"hit@1", "hit@3", "rp", "nrs@5", "cdr"}
        assert t[(name, "base")]["nrs@5"] == 1.0
    record = json.loads(
        (out / "runs" / "hybrid" / "r0" / "results.jsonl").read_text().split("\n")[0]
    )
    assert record["rerank_input"] == 6  # the whole pool, distractors included
    manifest = json.loads((out / "manifest.json").read_text())
    assert manifest["plan"] == {"bm25": 1, "dense": 1, "dense-e5": 1, "hybrid": 1}


def test_limit_samples_questions_and_keeps_both_settings(tmp_path: Path) -> None:
    from sciera.datasets import load_dataset

    folder = write_instances(tmp_path / "set")
    for seed in range(6):  # whichever question the seed draws, both its settings come along
        one = load_dataset("ssli", folder, limit=1, seed=seed)
        (question,) = {qid.split("/")[0] for qid in one.qids}
        assert one.qids == [f"{question}/base", f"{question}/ssli"]
        assert one.settings == {f"{question}/base": "base", f"{question}/ssli": "ssli"}
    assert load_dataset("ssli", folder, limit=2).qids == [i[0] for i in sorted(INSTANCES)]
    ssli_only = load_dataset("ssli", folder, split="ssli", limit=1, seed=0)
    assert len(ssli_only.qids) == 1 and ssli_only.qids[0].endswith("/ssli")


def test_resume_refuses_a_dataset_that_changed_under_logged_questions(tmp_path: Path) -> None:
    exp = load_experiment(example(tmp_path))
    bm25_only = exp.model_copy(update={"pipelines": exp.pipelines[:1]})
    out = tmp_path / "res"
    run_experiment(bm25_only, out)
    assert run_experiment(bm25_only, out).ran == {"bm25/r0": 0}  # same inputs: all reused
    path = tmp_path / "corpora" / "ssli-scifact" / "instances.jsonl"
    records = [json.loads(line) for line in path.read_text().splitlines()]
    # the set is rebuilt: same ids, another distractor text for q1/ssli
    records[1]["candidates"][-1]["text"] = "vitamin fracture risk rises in winter"
    path.write_text("".join(json.dumps(r) + "\n" for r in records))
    log = out / "runs" / "bm25" / "r0" / "results.jsonl"
    before = log.read_bytes()
    with pytest.raises(ScieraError, match=r"1 logged question\(s\) .*first: 'q1/ssli'"):
        run_experiment(bm25_only, out)
    assert log.read_bytes() == before  # nothing logged is lost or mixed


def test_distractors_only_keeps_the_questions_the_distractors_test(tmp_path: Path) -> None:
    from sciera.datasets import load_dataset

    folder = write_instances(tmp_path / "set")
    path = folder / "instances.jsonl"
    records = [json.loads(line) for line in path.read_text().splitlines()]
    for c in records[3]["candidates"]:  # q2/ssli: the build accepted no distractor
        c["is_distractor"], c["distractor_type"] = False, ""
    path.write_text("".join(json.dumps(r) + "\n" for r in records))
    assert load_dataset("ssli", folder).qids == ["q1/base", "q1/ssli", "q2/base", "q2/ssli"]
    assert load_dataset("ssli", folder, distractors_only=True).qids == ["q1/base", "q1/ssli"]
    base = load_dataset("ssli", folder, split="base", distractors_only=True)
    assert base.qids == ["q1/base"]  # decided on the SSLI instances, kept in every setting
    assert load_dataset("ssli", folder, limit=5, distractors_only=True).qids == [
        "q1/base",
        "q1/ssli",
    ]


def test_rank_plot_counts_only_real_distractors(tmp_path: Path) -> None:
    from sciera.eval.plots import rank_samples
    from sciera.eval.runstore import load_results

    exp = load_experiment(example(tmp_path))
    out = tmp_path / "res"
    run_experiment(exp.model_copy(update={"pipelines": exp.pipelines[:1]}), out)
    samples = rank_samples(load_results(out), "bm25")
    # 2 SSLI instances x 2 distractors; the Base instances' other passages are not counted
    assert len(samples["distractor before"]) == 4 and len(samples["gold before"]) == 4
    # q1/ssli ranks its distractors 1st and 3rd, q2/ssli 3rd and 6th (hand-checked above)
    assert sorted(samples["distractor after"]) == [1, 3, 3, 6]
