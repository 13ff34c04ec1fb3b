"""``sciera train deepera-calibrator``: a refit from the stored rows (no LLM) writes the
calibrators sciera ships. The shipped files were fitted on another CPU: their floats agree
with a refit here to the last digit or two (numpy's solver differs in rounding across CPUs),
everything else is equal. On one machine the command writes the same bytes as the script it
replaced (``git show e7f0f65:benchmarks/rerank_calibrate.py``)."""

from __future__ import annotations

import json
import shutil
from pathlib import Path

import numpy as np
import pytest
import typer
from click.testing import CliRunner

from sciera.cli import app, train_calibrator_cmds
from sciera.rerank.calibrate import BUNDLED, Calibrator, artifact_name

ROOT = Path(__file__).resolve().parents[3]
RESULTS = ROOT / "benchmarks" / "results"
MODEL = "llamacpp:qwen2.5-coder-1.5b-instruct-q4_k_m@cc324af070c2"


def same(got, want) -> bool:
    """Equal JSON, floats to 1e-12 relative."""
    if isinstance(want, dict):
        return (
            isinstance(got, dict)
            and list(got) == list(want)
            and all(same(got[k], want[k]) for k in want)
        )
    if isinstance(want, list):
        return (
            isinstance(got, list)
            and len(got) == len(want)
            and all(same(g, w) for g, w in zip(got, want, strict=True))
        )
    if isinstance(want, float):
        return isinstance(got, float) and got == pytest.approx(want, rel=1e-12, abs=1e-15)
    return got == want


def read(path: Path):
    return json.loads(path.read_text())


@pytest.mark.parametrize(
    ("flags", "suffix", "prompt"),
    [([], "", "deepera_assess@1"), (["--no-intent"], "_nointent", "deepera_assess@1+no_intent")],
)
def test_refit_from_the_stored_rows_writes_the_shipped_calibrator(
    flags, suffix, prompt, shared_data, tmp_path, monkeypatch
):
    rows = f"rerank_calibrate_rows_s13_n18_d10{suffix}.jsonl.gz"
    results = tmp_path / "results"
    results.mkdir()
    shutil.copy(RESULTS / rows, results / rows)
    bundled = tmp_path / "bundled"
    monkeypatch.setattr(train_calibrator_cmds, "_bundled", lambda: bundled)
    monkeypatch.setenv("SCIERA_HOME", str(tmp_path / "home"))
    args = ["train", "deepera-calibrator", "--analyze-only", *flags]
    args += ["--scifact", str(shared_data / "scifact"), "--results", str(results)]
    out = CliRunner().invoke(typer.main.get_group(app), args)
    assert out.exit_code == 0, out.output

    name = artifact_name(MODEL, prompt)
    made = (bundled / name).read_bytes()
    assert (tmp_path / "home" / "calibrators" / name).read_bytes() == made
    assert same(json.loads(made), read(BUNDLED / name))
    assert not same(read(bundled / name), {**read(BUNDLED / name), "n_pos": 14})  # can tell
    for features in ("grade+first_stage", "grade+p_yes+first_stage", "grade_only"):
        made_here = results / f"rerank_calibrator_{features}{suffix}.json"
        assert same(read(made_here), read(RESULTS / made_here.name))
    report = read(results / f"rerank_calibrate{suffix}.json")
    stored = read(RESULTS / f"rerank_calibrate{suffix}.json")
    for key in ("variants", "graded_per_claim_at_tau", "claims", "passages", "relevant"):
        assert same(report[key], stored[key]), key
    assert report["command"].startswith("sciera train deepera-calibrator --analyze-only")
    assert (results / f"rerank_calibration_reliability{suffix}.png").is_file()
    assert json.loads(out.output[: out.output.index("}") + 1])["claims"] == 18


def test_the_best_calibrator_is_chosen_by_out_of_fold_log_loss(tmp_path):
    from sciera.train.deepera_calibrator import CalibratorRun, analyze

    rng = np.random.default_rng(0)
    records = []
    for q in range(10):
        labels = [1] + [0] * 5
        rows = [
            {
                "label": y,
                "grade": 0.4 + 0.1 * y + 0.05 * rng.random(),
                "p_yes": rng.random(),  # noise: reading it can only cost log loss
                "first_stage_norm": 1.0 - i / 5,
                "reciprocal_rank": 1.0 / (i + 1),
                "seconds": 1.0,
            }
            for i, y in enumerate(labels)
        ]
        records.append(
            {"qid": str(q), "model_id": "m", "seconds": 6.0, "intent_fallback": False, "rows": rows}
        )
    fitted = analyze(records, CalibratorRun(scifact=tmp_path, results=tmp_path), claims_sampled=10)
    losses = {
        name: fitted.report["variants"][f"calibrated[{name}] (out-of-fold)"]["logloss"]
        for name in ("grade+first_stage", "grade+p_yes+first_stage")
    }
    assert fitted.best is fitted.calibrators[min(losses, key=losses.get)]
    assert isinstance(fitted.best, Calibrator) and fitted.best.model_id == "m"
    assert fitted.report["passages"] == 60 and fitted.report["relevant"] == 10
    assert set(fitted.calibrators) == {"grade+first_stage", "grade+p_yes+first_stage", "grade_only"}
