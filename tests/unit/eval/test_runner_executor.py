"""The runner's sharded path (what ``--ray`` runs on each worker) on the in-process
executor: the same records, outputs and resume as the question-by-question run."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from test_runner import experiment, scripted

from sciera.eval.runner import run_experiment
from sciera.executor import LocalExecutor


def _records(path: Path) -> dict[str, dict]:
    out = {}
    for line in path.read_text().splitlines():
        rec = json.loads(line)
        rec.pop("cost")  # seconds differ run to run
        out[rec["qid"]] = rec
    return out


class Stop(Exception):
    pass


def test_sharded_run_equals_the_run_here_and_resumes(tmp_path: Path) -> None:
    exp = experiment(tmp_path)
    here = tmp_path / "here"
    run_experiment(exp, here, llm_factory=scripted)

    def stop_after_one(label: str, done: int, total: int) -> None:
        if done >= 1:
            raise Stop

    sharded = tmp_path / "sharded"
    executor = LocalExecutor(shard_size=2)
    with pytest.raises(Stop):
        run_experiment(
            exp, sharded, llm_factory=scripted, executor=executor, progress=stop_after_one
        )
    summary = run_experiment(exp, sharded, llm_factory=scripted, executor=executor)
    assert summary.skipped["pool/r0"] == 1 and summary.ran["pool/r0"] == 2
    for run in ("pool/r0", "pool/r1", "pointwise/r0", "pointwise/r1"):
        folder = Path("runs") / run
        assert _records(sharded / folder / "results.jsonl") == _records(
            here / folder / "results.jsonl"
        )
        assert (sharded / folder / "run.trec").read_text() == (
            here / folder / "run.trec"
        ).read_text()
