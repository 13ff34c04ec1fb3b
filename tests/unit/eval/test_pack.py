"""``sciera eval pack|unpack``: what a committed results folder keeps plain, gzips and drops."""

from __future__ import annotations

import json
import os
import shutil
import sys
from pathlib import Path

import pytest
import typer
from click.testing import CliRunner
from PIL import Image

from sciera.cli import app, eval_pack_cmds  # noqa: F401  (registers the commands)
from sciera.datasets.loaders import EvalDataset
from sciera.errors import ScieraError
from sciera.eval.pack import optimize_png, pack_folder
from sciera.eval.resultlog import read_log, read_text
from sciera.eval.runstore import write_repeat_outputs


def sciera(*args: str) -> None:
    result = CliRunner().invoke(typer.main.get_group(app), list(args))
    assert result.exit_code == 0, result.output


def results_folder(root: Path) -> Path:
    """A results directory of one pipeline and repeat, its run files written by the runner's
    code, and a hand-edited traces.jsonl the log does not give back."""
    exp = root / "exp"
    repeat = exp / "runs" / "p" / "r0"
    repeat.mkdir(parents=True)
    manifest = {"experiment": {"pipelines": [{"name": "p"}], "metrics": []}, "plan": {"p": 1}}
    (exp / "manifest.json").write_text(json.dumps(manifest))
    queries = {"q1": "one?", "q2": "two?"}
    dataset = {"name": "d", "unit": "passage", "queries": queries, "qrels": {"q1": {"a": 1}}}
    (exp / "dataset.json").write_text(json.dumps(dataset))
    records = {
        q: {"qid": q, "first": [["a", 2.0], ["b", 1.0]], "answer": {"text": q}} for q in queries
    }
    (repeat / "results.jsonl").write_text("".join(json.dumps(r) + "\n" for r in records.values()))
    data = EvalDataset(name="d", unit="passage", queries=queries, qrels={})
    write_repeat_outputs(repeat, "p", 0, records, data)
    (repeat / "traces.jsonl").write_text('{"qid": "q1", "trace": "edited by hand"}\n')
    (exp / "report").mkdir()
    (exp / "report" / "table.json").write_text("{}")
    return exp


def test_pack_gzips_rows_and_logs_drops_what_unpack_writes_back(tmp_path):
    exp = results_folder(tmp_path)
    repeat = exp / "runs" / "p" / "r0"
    run_trec = (repeat / "run.trec").read_bytes()
    (tmp_path / "bench_rows.jsonl").write_text('{"qid": "q1"}\n')
    (tmp_path / "build").mkdir()
    (tmp_path / "build" / "qa.jsonl").write_text('{"passage_id": "a"}\n')

    sciera("eval", "pack", str(tmp_path))
    files = sorted(p.relative_to(tmp_path).as_posix() for p in tmp_path.rglob("*") if p.is_file())
    assert files == [
        "bench_rows.jsonl.gz",
        "build/qa.jsonl",  # an SSLI build's own resume log stays as the builder reads it
        "exp/dataset.json.gz",
        "exp/manifest.json",
        "exp/report/table.json",
        "exp/runs/p/r0/results.jsonl.gz",
        "exp/runs/p/r0/traces.jsonl.gz",  # not what the log gives back: kept, gzipped
    ]
    packed = {f: (tmp_path / f).read_bytes() for f in files}
    pack_folder(tmp_path)  # again: nothing changes
    assert {f: (tmp_path / f).read_bytes() for f in files} == packed
    assert list(read_log(repeat / "results.jsonl")) == ["q1", "q2"]
    assert read_text(tmp_path / "bench_rows.jsonl") == '{"qid": "q1"}\n'

    sciera("eval", "unpack", str(tmp_path))
    assert (repeat / "run.trec").read_bytes() == run_trec
    assert (repeat / "answers.jsonl").is_file() and (repeat / "first_stage.trec").is_file()
    assert read_text(repeat / "traces.jsonl") == '{"qid": "q1", "trace": "edited by hand"}\n'


def plot_png(path: Path) -> Image.Image:
    """An uncompressed PNG of a line on white, as a plot would be saved without care."""
    img = Image.new("RGBA", (64, 32), (255, 255, 255, 255))
    for x in range(64):
        img.putpixel((x, x % 32), (31, 119, 180, 255))
    img.save(path, compress_level=0)
    return img


def test_png_is_reencoded_by_pillow_with_the_same_pixels(tmp_path):
    path = tmp_path / "plot.png"
    img = plot_png(path)
    before = path.stat().st_size
    saved = optimize_png(path, encoder="pillow")
    assert saved > 0 and path.stat().st_size == before - saved
    with Image.open(path) as back:
        assert back.convert("RGBA").tobytes() == img.tobytes()
    assert optimize_png(path, encoder="pillow") == 0  # already optimized: left as it is


def fake_optipng(bin_dir: Path, body: str) -> None:
    """An ``optipng`` on the PATH that writes its ``-out`` file with Pillow: ``body`` is
    Python run on the opened image ``img`` before it is saved."""
    bin_dir.mkdir()
    script = bin_dir / "optipng"
    script.write_text(
        f"#!{sys.executable}\n"
        "import sys\nfrom PIL import Image\n"
        "args = sys.argv[1:]\nout, src = args[args.index('-out') + 1], args[-1]\n"
        f"img = Image.open(src).convert('RGBA')\n{body}\n"
        "img.save(out, optimize=True)\n"
    )
    script.chmod(0o755)


def test_optipng_output_replaces_the_file_only_with_the_same_pixels(tmp_path, monkeypatch):
    path = tmp_path / "plot.png"
    img = plot_png(path)
    fake_optipng(tmp_path / "bin", "pass")
    monkeypatch.setenv("PATH", f"{tmp_path / 'bin'}{os.pathsep}{os.environ['PATH']}")
    saved = optimize_png(path)  # optipng is on the PATH: it is the default encoder
    assert saved > 0
    with Image.open(path) as back:
        assert back.convert("RGBA").tobytes() == img.tobytes()

    plot_png(path)
    original = path.read_bytes()
    shutil.rmtree(tmp_path / "bin")
    fake_optipng(tmp_path / "bin", "img.putpixel((0, 1), (0, 0, 0, 255))")
    with pytest.raises(ScieraError, match="optipng changed the pixels"):
        optimize_png(path)
    assert path.read_bytes() == original  # a changed picture never replaces the file


def test_a_file_given_by_name_is_gzipped_and_a_png_reencoded_with_png(tmp_path):
    rows, png = tmp_path / "rows.jsonl", tmp_path / "plot.png"
    rows.write_text('{"qid": "q1"}\n')
    img = plot_png(png)
    before = png.stat().st_size
    sciera("eval", "pack", str(rows), str(png))  # without --png a PNG is left as it is
    assert not rows.exists() and read_text(rows) == '{"qid": "q1"}\n'
    assert png.stat().st_size == before
    sciera("eval", "pack", str(png), "--png")
    assert png.stat().st_size < before
    with Image.open(png) as back:
        assert back.convert("RGBA").tobytes() == img.tobytes()
