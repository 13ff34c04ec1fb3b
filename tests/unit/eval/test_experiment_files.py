"""The quality runs' experiment files load (schema, metrics, paths against the shared data;
the corpus each names is built by the commands in its header, so a stand-in folder takes
its place here), and a pipeline's own ``settings:`` are checked when the file is read."""

from __future__ import annotations

from pathlib import Path

import pytest
import yaml

from sciera.errors import ScieraError
from sciera.eval.experiment import Experiment, parse_experiment
from sciera.settings import load_settings, with_overrides

EXPERIMENTS = Path(__file__).resolve().parents[3] / "benchmarks" / "experiments"
FILES = {
    "scifact_ce_shipped.yaml": {"hybrid", "fused", "fused_int8", "ce"},
    "nfcorpus_ce_shipped.yaml": {"hybrid", "fused", "fused_int8", "ce"},
    "pubmedqa_ce_shipped.yaml": {"hybrid", "fused", "fused_int8", "ce"},
    "scifact_embedder_shipped.yaml": {"bm25", "dense_minilm", "dense", "hybrid_minilm", "hybrid"},
    "nfcorpus_embedder_shipped.yaml": {"bm25", "dense_minilm", "dense", "hybrid_minilm", "hybrid"},
    "pubmedqa_embedder_shipped.yaml": {"bm25", "dense_minilm", "dense", "hybrid_minilm", "hybrid"},
    "ssli_scifact_injected.yaml": {"hybrid", "fused", "fused_int8", "ce"},
    "ssli_scifact_injected_base.yaml": {"hybrid", "fused", "fused_int8", "ce"},
    "scifact_rerankers.yaml": None,
    "pubmedqa_extractors.yaml": None,
    "fulltext_questions.yaml": None,
}


def load(name: str, corpus: Path) -> Experiment:
    """``name`` read with ``corpus`` in place of the corpora/ folders it names."""
    path = EXPERIMENTS / name
    data = yaml.safe_load(path.read_text(encoding="utf-8"))
    data["corpus"] = str(corpus)
    if data["dataset"]["path"].startswith("../../corpora/"):  # made by a `sciera` command
        data["dataset"]["path"] = str(corpus)
    return parse_experiment(data, str(path), path.parent)


@pytest.mark.parametrize("name", sorted(FILES))
def test_the_file_loads_and_its_header_gives_its_commands(name: str, tmp_path: Path) -> None:
    exp = load(name, tmp_path)
    assert exp.name == name.removesuffix(".yaml")
    if FILES[name] is not None:
        assert {p.name for p in exp.pipelines} == FILES[name]
    header = (EXPERIMENTS / name).read_text(encoding="utf-8")
    assert f"sciera eval run benchmarks/experiments/{name} --out benchmarks/results/" in header
    assert "sciera eval report benchmarks/results/" in header


def test_the_embedder_comparison_differs_only_in_its_embedder(tmp_path: Path) -> None:
    exp = load("scifact_embedder_shipped.yaml", tmp_path)
    base = load_settings(**exp.settings)
    by_name = {p.name: with_overrides(base, p.settings) for p in exp.pipelines}
    assert by_name["hybrid"].embed.backend == "scifact-minilm"
    assert by_name["hybrid_minilm"].embed.backend == "minilm"
    assert by_name["hybrid_minilm"].model_copy(update={"embed": base.embed}) == by_name["hybrid"]


def test_with_overrides_merges_nested_values() -> None:
    base = load_settings()
    assert with_overrides(base, {}) is base
    out = with_overrides(base, {"retrieve": {"sections": ["methods"]}})
    assert out.retrieve.sections == ("methods",)
    assert out.retrieve.rrf_k == base.retrieve.rrf_k and out.embed == base.embed


def test_a_pipeline_setting_that_does_not_exist_is_refused_with_its_place() -> None:
    spec = {
        "name": "x",
        "dataset": {"type": "beir", "path": "."},
        "metrics": ["ndcg@10"],
        "pipelines": [{"name": "p", "retriever": "bm25", "settings": {"embed": {"backnd": "x"}}}],
    }
    with pytest.raises(ScieraError, match=r"pipelines\[0\]\.settings: embed\.backnd"):
        parse_experiment(spec, "x.yaml")
