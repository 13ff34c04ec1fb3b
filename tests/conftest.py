"""Shared fixtures. Real evaluation data lives beside the project in ../shared/data."""

from __future__ import annotations

import os
from pathlib import Path

import pytest

from workers import TEST_THREADS, pin_threads

REPO_ROOT = Path(__file__).resolve().parents[1]
SHARED_DATA = (REPO_ROOT / ".." / "shared" / "data").resolve()

# Tests never reach a model hub: everything loads from installed packages.
os.environ.setdefault("HF_HUB_OFFLINE", "1")
os.environ.setdefault("TRANSFORMERS_OFFLINE", "1")

# one core per pytest-xdist worker (tests/workers.py)
pin_threads()
RAY_TESTS = "tests/integration/test_ray_"


def pytest_xdist_make_scheduler(config, log):
    """Each test file goes to one worker as one unit, in the order collected (the slow tiers
    first), so a module's fixtures are built once; the Ray tests go together, so one local
    cluster serves them all (an `xdist_group` mark would say so, but pytest 9.2 drops it:
    pytest-xdist issue 1386)."""
    if config.getvalue("dist") != "load":
        return None
    from xdist.scheduler import LoadScopeScheduling

    class ByFileRayTogether(LoadScopeScheduling):
        def _split_scope(self, nodeid: str) -> str:
            return "ray" if nodeid.startswith(RAY_TESTS) else nodeid.split("::")[0]

    config.option.loadscopereorder = False  # not the files with the most tests first
    return ByFileRayTogether(config, log)


# In CI every extra is installed, so a skipped test means something is missing: fail it.
STRICT = os.environ.get("CI", "").lower() == "true" or os.environ.get("SCIERA_STRICT_TESTS") == "1"


def _strict(report: pytest.TestReport | pytest.CollectReport) -> None:
    if STRICT and report.skipped and not hasattr(report, "wasxfail"):
        report.outcome = "failed"
        report.longrepr = f"skipped in CI, where nothing may be missing: {report.longrepr}"


@pytest.hookimpl(hookwrapper=True)
def pytest_runtest_makereport(item, call):
    outcome = yield
    _strict(outcome.get_result())


@pytest.hookimpl(hookwrapper=True)
def pytest_make_collect_report(collector):
    outcome = yield
    _strict(outcome.get_result())


@pytest.fixture(scope="session")
def shared_data() -> Path:
    if not (SHARED_DATA / "scifact" / "corpus.jsonl").exists():
        pytest.fail(f"shared evaluation data not found at {SHARED_DATA}")
    return SHARED_DATA


@pytest.fixture(scope="session")
def scifact_dir(shared_data: Path) -> Path:
    return shared_data / "scifact"


# --- embedded LLM (integration tests) ------------------------------------------------------
# Weights are assembled once into Settings().home (SCIERA_HOME in CI) and reused across runs.
DEFAULT_GGUF = "qwen2.5-coder-1.5b-instruct-q4_k_m"


@pytest.fixture(scope="session")
def gguf_path() -> Path:
    """The verified 1.5B GGUF file (assembled from its part packages on first use)."""
    from sciera.llm.weights import ensure_model
    from sciera.settings import Settings

    return ensure_model(DEFAULT_GGUF, Settings().home)


@pytest.fixture(scope="session")
def llm_1p5b(gguf_path: Path):
    """One shared, uncached LlamaCppLLM on the 1.5B model (TEST_THREADS, n_ctx 4096)."""
    from sciera.llm.llamacpp import LlamaCppLLM
    from sciera.llm.weights import resolve_model
    from sciera.settings import Settings

    resolved = resolve_model(DEFAULT_GGUF, Settings().home)
    return LlamaCppLLM(gguf_path, model_id=f"llamacpp:{resolved.model_id}", threads=TEST_THREADS)


# --- fresh SCIERA_HOMEs that share what is slow to make ----------------------------------------


@pytest.fixture(scope="session")
def fresh_home(gguf_path: Path):
    """Makes a fresh SCIERA_HOME (a test's own LLM response cache, calibrators and embedding
    cache) with two folders of Settings().home linked in: the LLM weights and the int8 ONNX
    exports of cross-encoders, which the README's main job leaves there for the shipped one
    (each home would otherwise assemble the 1.5B again and export the cross-encoder again:
    about 10 and 20 s). ``onnx_exports=False`` links the weights alone, for a test of the
    export itself. Only weights may be written to the linked ``models`` (the default
    home's)."""
    from sciera.settings import Settings

    onnx = Path(Settings().home) / "cache" / "onnx"
    onnx.mkdir(parents=True, exist_ok=True)

    def make(folder: Path, *, onnx_exports: bool = True) -> Path:
        (folder / "cache").mkdir(parents=True)
        if onnx_exports:
            (folder / "cache" / "onnx").symlink_to(onnx, target_is_directory=True)
        (folder / "models").symlink_to(gguf_path.parent, target_is_directory=True)
        return folder

    return make


# --- full SciFact corpus, ingested and indexed once per session (e2e experiments) ----------
# the default embedder (the shipped scifact-minilm): the README's main job has embedded
# these very passages into the embedding cache of SCIERA_HOME, so CI does not embed again
SCIFACT_INDEX_SETTINGS: dict = {}


@pytest.fixture(scope="session")
def scifact_full_corpus(scifact_dir: Path, tmp_path_factory: pytest.TempPathFactory) -> Path:
    """All 5,183 SciFact abstracts ingested, with BM25 + dense indexes of the default
    embedder (seconds once its vectors are cached; ~5 min to embed them cold)."""
    from sciera.corpus import ingest
    from sciera.retrieve import build_indexes
    from sciera.settings import load_settings

    corpus = tmp_path_factory.mktemp("scifact-full")
    ingest(scifact_dir, corpus, format="beir")
    build_indexes(corpus, load_settings(**SCIFACT_INDEX_SETTINGS))
    return corpus


@pytest.fixture(scope="session")
def scifact_slice(scifact_dir: Path, tmp_path_factory: pytest.TempPathFactory) -> Path:
    """The first 300 SciFact abstracts, ingested and BM25-indexed (read-only: shared by the
    tests that ask, research or serve over a real slice; claim 1137's gold 33370 is in it)."""
    from sciera.corpus import ingest
    from sciera.retrieve import build_indexes
    from sciera.settings import load_settings

    root = tmp_path_factory.mktemp("scifact-slice")
    lines = (scifact_dir / "corpus.jsonl").read_text(encoding="utf-8").splitlines()[:300]
    (root / "corpus.jsonl").write_text("\n".join(lines) + "\n", encoding="utf-8")
    ingest(root / "corpus.jsonl", root / "corpus", format="beir")
    build_indexes(root / "corpus", load_settings(), which=["bm25"])
    return root / "corpus"
