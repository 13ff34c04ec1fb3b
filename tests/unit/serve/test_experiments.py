"""/v1/experiments on a results folder written by the project's own runner and report
writer (a candidates-only pipeline: no model), and names that try to leave the folder."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from fastapi.testclient import TestClient
from serve_helpers import assert_one_line_error

from sciera.eval.experiment import parse_experiment
from sciera.eval.report import write_report
from sciera.eval.runner import run_experiment
from sciera.serve.errors import NotFound
from sciera.serve.experiments import Experiments

PNG = b"\x89PNG\r\n\x1a\n" + b"not really an image"


def ssli_file(path: Path) -> Path:
    """Two SSLI questions; the pool lists the distractor first, the gold passage second."""
    with open(path, "w", encoding="utf-8") as fh:
        for qid in ("q1", "q2"):
            distractor = {"passage_id": f"{qid}-d", "text": "distractor", "is_distractor": True}
            gold = {"passage_id": f"{qid}-g", "text": "gold", "is_distractor": False}
            candidates = [
                {**distractor, "distractor_type": "misleading"},
                {**gold, "distractor_type": ""},
            ]
            record = {
                "id": qid,
                "question": f"question {qid}?",
                "answer": "a",
                "gold_passage_ids": [f"{qid}-g"],
                "setting": "base",
                "candidates": candidates,
                "provenance": {},
            }
            fh.write(json.dumps(record) + "\n")
    return path


@pytest.fixture(scope="module")
def folder(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """``root/results/pool-only`` (a real report plus one PNG) and ``root/secret`` beside it."""
    root = tmp_path_factory.mktemp("experiments")
    spec = {
        "name": "pool-only",
        "dataset": {"type": "ssli", "path": str(ssli_file(root / "ssli.jsonl"))},
        "metrics": ["hit@1", "mrr@10"],
        "repeats": 1,
        "pipelines": [{"name": "pool", "retriever": "candidates"}],
    }
    out = root / "results" / "pool-only"
    run_experiment(parse_experiment(spec, "pool-only.yaml"), out)
    write_report(out, plots=False)
    (out / "report" / "rank_distribution.png").write_bytes(PNG)
    (root / "results" / "notes").mkdir()  # no manifest: not an experiment
    secret = root / "secret"
    (secret / "report").mkdir(parents=True)
    (secret / "manifest.json").write_text('{"experiment": {"name": "TOPSECRET"}}')
    (secret / "report" / "leak.png").write_bytes(PNG)
    return root


@pytest.fixture
def api(make_app, folder: Path) -> TestClient:
    with TestClient(make_app(experiments_dir=folder / "results")) as c:
        yield c


def test_listing_shows_the_experiment_and_its_plot(api):
    (exp,) = api.get("/v1/experiments").json()
    assert exp["name"] == "pool-only" and exp["experiment"] == "pool-only"
    assert exp["dataset"]["questions"] == 2 and exp["pipelines"] == ["pool"]
    assert exp["report"] is True
    assert exp["plots"] == [
        {
            "name": "rank_distribution.png",
            "url": "/v1/experiments/pool-only/plots/rank_distribution.png",
        }
    ]


def test_one_experiment_has_the_report_tables(api):
    data = api.get("/v1/experiments/pool-only").json()
    (row,) = data["table"]["rows"]
    assert row["pipeline"] == "pool" and row["cells"]["hit@1"]["mean"] == 0.0  # gold 2nd
    assert row["cells"]["mrr@10"]["mean"] == pytest.approx(0.5)
    assert "| pool |" in data["markdown"] and data["plan"] == {"pool": 1}


def test_a_plot_is_served_as_png(api):
    r = api.get("/v1/experiments/pool-only/plots/rank_distribution.png")
    assert r.status_code == 200 and r.headers["content-type"] == "image/png"
    assert r.content == PNG


@pytest.mark.parametrize(
    "path",
    [
        "/v1/experiments/..%2Fsecret",
        "/v1/experiments/..",
        "/v1/experiments/notes",
        "/v1/experiments/..%2Fsecret/plots/leak.png",
        "/v1/experiments/pool-only/plots/..%2F..%2Fsecret%2Freport%2Fleak.png",
        "/v1/experiments/pool-only/plots/table.json",
        "/v1/experiments/pool-only/plots/%2Fetc%2Fpasswd",
    ],
)
def test_names_outside_the_listing_are_404(api, path):
    r = api.get(path)
    assert r.status_code == 404 and "TOPSECRET" not in r.text and r.content != PNG
    assert_one_line_error(r, 404)


def test_lookups_never_join_an_unlisted_name(folder):
    experiments = Experiments(folder / "results")
    assert experiments.names() == ["pool-only"]
    for name in ("../secret", str(folder / "secret"), "notes", ""):
        with pytest.raises(NotFound):
            experiments.folder(name)
    with pytest.raises(NotFound):
        experiments.plot("pool-only", "../../secret/report/leak.png")


def test_no_folder_means_no_experiments(client):
    assert client.get("/v1/experiments").json() == []
    assert_one_line_error(client.get("/v1/experiments/pool-only"), 404)
